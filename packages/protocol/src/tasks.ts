// The one task model of scan and print (docs/tasks.md). The API names no states, only flags
// (docs/api.md, "Scan task", "Print task"); these are the labels of its life, made
// explicit so every change is a row below and the repository applies it with a conditional
// UPDATE (`WHERE state IN (from)`): a race loses cleanly instead of writing over a newer state.
//
//   created ──ack──▶ received ──started──▶ started
//      │                │                     │
//      └────────────────┴──── finish ─────────┴──▶ ended ──expiry──▶ (destroyed)
//
// Recognition tasks (docs/cards.md) share the table, the expiry and the end; they have no box:
// created at ess/create, received once a scan is bound to their address, ended once the end
// callback is queued.

export const TaskKind = ['scan', 'print', 'recognition'] as const;
export type TaskKind = (typeof TaskKind)[number];

export const TaskState = ['created', 'received', 'started', 'ended'] as const;
export type TaskState = (typeof TaskState)[number];

/** States in which a task still holds its device (docs/api.md, "Scan task": one active scan per device). */
export const ACTIVE_STATES: readonly TaskState[] = ['created', 'received', 'started'];

export const TaskTrigger = [
  'box.ack',
  'box.refused',
  'box.lost',
  'scan.finished',
  'scan.stop',
  'print.started',
  'print.finished',
  'print.cancel',
  'recognition.bound',
  'recognition.finished',
  'unbind',
  'expire',
] as const;
export type TaskTrigger = (typeof TaskTrigger)[number];

export interface Transition {
  kinds: readonly TaskKind[];
  from: readonly TaskState[];
  trigger: TaskTrigger;
  to: TaskState;
  /** What the row means, for the docs and the table-driven test. */
  effect: string;
}

export const TRANSITIONS: readonly Transition[] = [
  {
    kinds: ['scan', 'print'],
    from: ['created'],
    trigger: 'box.ack',
    to: 'received',
    effect: 'action_ack, action_ack_at; the box holds the task',
  },
  {
    kinds: ['scan', 'print'],
    from: ['created'],
    trigger: 'box.refused',
    to: 'ended',
    effect: 'the box refused or never acknowledged the task: finished with an error, device released',
  },
  {
    kinds: ['scan', 'print'],
    from: ['created', 'received', 'started'],
    trigger: 'box.lost',
    to: 'ended',
    effect: 'the box restarted and no longer holds the task: finished with an error',
  },
  {
    kinds: ['scan'],
    from: ['created', 'received'],
    trigger: 'scan.finished',
    to: 'ended',
    effect: 'the box reports the end (feeder empty, wait over, fault): scan.finish, lock released',
  },
  {
    kinds: ['scan'],
    from: ['created', 'received'],
    trigger: 'scan.stop',
    to: 'ended',
    effect: 'stop: ends at once whatever the box does, scan.finish, lock released',
  },
  {
    kinds: ['print'],
    from: ['created', 'received'],
    trigger: 'print.started',
    to: 'started',
    effect: 'started, started_at, pages',
  },
  {
    kinds: ['print'],
    from: ['created', 'received', 'started'],
    trigger: 'print.finished',
    to: 'ended',
    effect: 'finished, finished_at, printed_pages in strict mode, error_code',
  },
  {
    kinds: ['print'],
    from: ['created', 'received', 'started'],
    trigger: 'print.cancel',
    to: 'ended',
    effect: 'cancel: finished with the cancelled code',
  },
  {
    kinds: ['recognition'],
    from: ['created'],
    trigger: 'recognition.bound',
    to: 'received',
    effect: 'a scan task names the address: the one scan this task serves',
  },
  {
    kinds: ['recognition'],
    from: ['created', 'received'],
    trigger: 'recognition.finished',
    to: 'ended',
    effect: 'every student result is queued and the end callback with them',
  },
  {
    kinds: ['scan', 'print'],
    from: ['created', 'received', 'started'],
    trigger: 'unbind',
    to: 'ended',
    effect: 'the application unbound the box: finished with the unbound code, its final callback to that application',
  },
  {
    kinds: ['scan', 'print', 'recognition'],
    from: ['created', 'received', 'started', 'ended'],
    trigger: 'expire',
    to: 'ended',
    effect: 'expires_at reached: the task and its files are destroyed',
  },
];

/** The transition a trigger makes from a state, or undefined when it makes none. */
export function transition(kind: TaskKind, from: TaskState, trigger: TaskTrigger): Transition | undefined {
  return TRANSITIONS.find((t) => t.trigger === trigger && t.kinds.includes(kind) && t.from.includes(from));
}

/** A trigger the kind's table has no row for: a programming error, never a race (a race
 *  finds the task in no source state and changes nothing). */
export class NoTransition extends Error {
  constructor(kind: TaskKind, trigger: TaskTrigger) {
    super(`the transition table has no row for trigger '${trigger}' of a ${kind} task`);
    this.name = 'NoTransition';
  }
}

/** The state a trigger moves a task of this kind to (every row of a trigger and kind has the
 *  same target); throws NoTransition when the table has no row for them. */
export function targetOf(kind: TaskKind, trigger: TaskTrigger): TaskState {
  const row = TRANSITIONS.find((t) => t.trigger === trigger && t.kinds.includes(kind));
  if (!row) throw new NoTransition(kind, trigger);
  return row.to;
}

/** Every state a trigger may leave from, for a kind (the repository's `WHERE state IN (…)`). */
export function sourcesOf(kind: TaskKind, trigger: TaskTrigger): TaskState[] {
  return [
    ...new Set(TRANSITIONS.filter((t) => t.trigger === trigger && t.kinds.includes(kind)).flatMap((t) => t.from)),
  ];
}
