// The files of `boxhub device import` (docs/fleet.md, "Provisioning by the hundred"): the list of
// boxes in (CSV with a header `code,model,labels`, labels separated by spaces or `;`; or JSON, an
// array of {code, model, labels}), and their secrets out, as CSV `code,uuid,secret,status` for
// the factory image. A CSV field may be quoted ("…", "" for a quote inside).
import { api, parseJson } from '@boxhub/protocol';
import { messageOf } from './exit.ts';

export type BoxEntry = api.BulkRegisterBody['devices'][number];

export function parseBoxList(text: string, name: string): BoxEntry[] {
  const trimmed = text.trim();
  const raw = trimmed.startsWith('[') || trimmed.startsWith('{') ? fromJson(trimmed, name) : fromCsv(trimmed, name);
  const checked = parseJson(api.BulkRegisterBody, JSON.stringify({ devices: raw }));
  if (!checked.ok) throw new Error(`${name}: ${checked.error}`);
  return checked.value.devices;
}

function fromJson(text: string, name: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${name} is not JSON: ${messageOf(e)}`);
  }
  // A JSON null or number has no list: undefined, which the schema check then refuses.
  return Array.isArray(v) ? v : typeof v === 'object' && v !== null && 'devices' in v ? v.devices : undefined;
}

function fromCsv(text: string, name: string): BoxEntry[] {
  const rows = text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .map(csvFields);
  const header = (rows.shift() ?? []).map((h) => h.trim().toLowerCase());
  const col = (h: string) => header.indexOf(h);
  if (col('code') < 0 || col('model') < 0)
    throw new Error(`${name}: the first line must name the columns: code,model[,labels]`);
  return rows.map((r) => {
    const labels = (r[col('labels')] ?? '').split(/[\s;]+/).filter(Boolean);
    return {
      code: (r[col('code')] ?? '').trim(),
      model: (r[col('model')] ?? '').trim(),
      ...(labels.length ? { labels } : {}),
    };
  });
}

function csvFields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

export function secretsLine(r: api.BulkRegistered): string {
  return `${r.code},${r.uuid},${r.secret ?? ''},${r.status}\n`;
}

export function secretsCsv(rows: readonly api.BulkRegistered[]): string {
  return `code,uuid,secret,status\n${rows.map(secretsLine).join('')}`;
}
