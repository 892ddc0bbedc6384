// A scan or print task's history (docs/tasks.md, "History"): boxhub extension. The timeline of
// what happened to the task and who said so, oldest first; it expires with its task.
import Type, { type Static } from 'typebox';
import { Envelope, Id } from './envelope.ts';

export const TaskHistoryQuery = Type.Object({ uuid: Id('scan or print task uuid') }, { additionalProperties: false });
export type TaskHistoryQuery = Static<typeof TaskHistoryQuery>;

export const TaskHistoryEntry = Type.Object({
  at: Type.Integer({ description: 'when the server recorded it, Unix ms' }),
  source: Type.Union([Type.Literal('server'), Type.Literal('box'), Type.Literal('printer'), Type.Literal('scanner')], {
    description: 'who said so',
  }),
  what: Type.String({
    description:
      'created, sent, acknowledged, downloaded, accepted, printer_state, scanner_state, pages_done, item_stored, finished, cancelled, stopped, refused, lost, expired (docs/tasks.md, "History")',
  }),
  detail: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: 'the entry\'s facts (docs/tasks.md, "History")' }),
  ),
});
export type TaskHistoryEntry = Static<typeof TaskHistoryEntry>;

export const TaskHistory = Type.Object({
  uuid: Type.String(),
  kind: Type.Union([Type.Literal('scan'), Type.Literal('print')]),
  client_uuid: Type.String({ description: 'the device' }),
  entries: Type.Array(TaskHistoryEntry, { description: 'oldest first; at most 2000' }),
});
export type TaskHistory = Static<typeof TaskHistory>;
export const TaskHistoryResponse = Envelope(TaskHistory);
