// The console's destructive and irreversible actions (docs/console.md "Confirmation"), each
// described once: where its form posts, its button, and the question that names what will
// happen. The page's button (`dangerForm`) and the route's confirmation step (`askFirst`, when
// the POST does not carry `_confirmed=1`) both take the same description, so what the dialog
// asks and what the no-script confirmation page asks cannot drift apart.
import type { api } from '@boxhub/protocol';
import type { KeyView } from '../applications/service.ts';
import type { InkjetOp } from '../control/service.ts';

export interface Danger {
  /** Where the form posts. */
  action: string;
  /** The button on the page. */
  button: string;
  /** The id and class of that button (tests and styles find it by them). */
  id?: string;
  cls?: string;
  /** The question, naming exactly what will happen. */
  ask: string;
  /** The confirming button's label ("Revoke the key"). */
  yes: string;
  /** Where "Cancel" on the confirmation page goes. */
  back: string;
}

const enc = encodeURIComponent;
const devUrl = (uuid: string) => `/console/devices/${enc(uuid)}`;
/** A box as people know it: its name and its code. */
const boxName = (c: api.Client) => `"${c.name ?? c.uuid}" (code ${c.code})`;
const keyName = (k: KeyView) => `"${k.name}" (${k.prefix}…)`;
const keyUrl = (k: KeyView, operator: boolean) =>
  operator ? `/console/operator/keys/${enc(k.id)}` : `/console/keys/${enc(k.id)}`;
const keysBack = (k: KeyView, operator: boolean) =>
  operator ? `/console/operator/applications/${enc(k.app_id)}` : '/console/keys';

export const dangers = {
  revokeKey: (k: KeyView, operator: boolean): Danger => ({
    action: `${keyUrl(k, operator)}/revoke`,
    button: 'Revoke',
    cls: 'revoke-key secondary',
    yes: 'Revoke the key',
    back: keysBack(k, operator),
    ask: `Revoke the API key ${keyName(k)}? Applications using it are refused at once, on every node, and console sessions signed in with it end. This cannot be undone.`,
  }),
  rotateKey: (k: KeyView, operator: boolean): Danger => ({
    action: `${keyUrl(k, operator)}/rotate`,
    button: 'Rotate',
    cls: 'rotate-key',
    yes: 'Rotate the key',
    back: keysBack(k, operator),
    ask: `Rotate the API key ${keyName(k)}? A new key with the same name is shown once; this one stops working at once, on every node, so applications using it are refused until they have the new one.`,
  }),
  rotateCallbackSecret: (id: string, back: string): Danger => ({
    action: '/console/callbacks/rotate_secret',
    button: id === 'rotate-callback-secret' ? 'Rotate the callback secret' : 'Rotate',
    id,
    cls: 'secondary',
    yes: 'Rotate the secret',
    back,
    ask: 'Rotate the callback secret? A new whsec_ secret is shown once; the current one keeps signing callbacks only until its grace period ends, then receivers that check signatures with it refuse them.',
  }),
  unbind: (c: api.Client): Danger => ({
    action: `${devUrl(c.uuid ?? '')}/unbind`,
    button: 'Unbind',
    id: 'unbind',
    cls: 'secondary',
    yes: 'Unbind the box',
    back: devUrl(c.uuid ?? ''),
    ask: `Unbind the box ${boxName(c)}? It no longer belongs to this application: it leaves the device list and the API answers "not found" for it until it is bound again by its code.`,
  }),
  reboot: (c: api.Client): Danger => ({
    action: `${devUrl(c.uuid ?? '')}/reboot`,
    button: 'Reboot',
    id: 'reboot',
    cls: 'secondary',
    yes: 'Reboot the box',
    back: devUrl(c.uuid ?? ''),
    ask: `Reboot the box ${boxName(c)}? It goes offline until it has restarted; a scan or print it is running is interrupted.`,
  }),
  cancelPrints: (c: api.Client): Danger => ({
    action: `${devUrl(c.uuid ?? '')}/print/cancel`,
    button: 'Cancel every print',
    id: 'cancel-prints',
    cls: 'secondary',
    yes: 'Cancel every print',
    back: devUrl(c.uuid ?? ''),
    ask: `Cancel every print of the box ${boxName(c)}? Every print task of the box ends, the one printing too, and its queue is emptied.`,
  }),
  stopScan: (c: api.Client, scanUuid: string): Danger => ({
    action: `${devUrl(c.uuid ?? '')}/scans/${enc(scanUuid)}/stop`,
    button: 'Stop the scan',
    id: 'stop-scan',
    cls: 'secondary',
    yes: 'Stop the scan',
    back: `${devUrl(c.uuid ?? '')}/scans/${enc(scanUuid)}`,
    ask: `Stop the scan running on the box ${boxName(c)}? The task ends now and cannot be resumed; the items already scanned are kept.`,
  }),
  /** The inkjet operations that use ink; the nozzle check (one page) asks nothing, as a print does not. */
  inkjet: (c: api.Client, op: InkjetOp): Danger | undefined => {
    const at = { action: `${devUrl(c.uuid ?? '')}/inkjet/${op}`, cls: 'secondary', back: devUrl(c.uuid ?? '') };
    if (op === 'head_clean')
      return {
        ...at,
        button: 'Clean the print head',
        id: 'head-clean',
        yes: 'Clean the print head',
        ask: `Clean the print head of the printer on ${boxName(c)}? Cleaning uses ink.`,
      };
    if (op === 'power_ink_flush') {
      return {
        ...at,
        button: 'Power ink flush',
        id: 'power-ink-flush',
        yes: 'Run a power ink flush',
        ask: `Run a power ink flush on the printer of ${boxName(c)}? It uses a lot of ink, and the next one is allowed only after 24 hours. Try cleaning the print head first.`,
      };
    }
    return undefined;
  },
  deleteTemplate: (t: { template_id: string; card_id: string }): Danger => ({
    action: `/console/templates/${enc(t.template_id)}/delete`,
    button: 'Delete',
    id: 'delete-template',
    cls: 'secondary',
    yes: 'Delete the template',
    back: `/console/templates/${enc(t.template_id)}`,
    ask: `Delete the card template ${t.template_id} (card "${t.card_id}")? Its cards are no longer recognized for this application and its PDF is deleted; pages already read keep their results. This cannot be undone.`,
  }),
  newDeviceSecret: (d: { uuid: string; code: string }): Danger => ({
    action: `/console/operator/devices/${enc(d.uuid)}/rotate_secret`,
    button: 'New secret',
    cls: 'rotate-secret secondary',
    yes: 'Give it a new secret',
    back: '/console/operator/devices',
    ask: `Give the box ${d.code} a new secret? Its current secret stops working at once and its session is dropped: the box is offline until its agent is given the new secret, shown once on the next page.`,
  }),
  revokeDevice: (d: { uuid: string; code: string }): Danger => ({
    action: `/console/operator/devices/${enc(d.uuid)}/revoke`,
    button: 'Revoke',
    cls: 'revoke-device secondary',
    yes: 'Revoke its secret',
    back: '/console/operator/devices',
    ask: `Revoke the secret of the box ${d.code}? Its session is dropped and it cannot log in until it is given a new secret.`,
  }),
};
