// Card templates: the application's list with a form that creates one from a card definition
// (docs/cards.md), and a template's page with its layout drawn, its PDF and delete.
import type { api } from '@boxhub/protocol';
import { html, when, type Html } from './html.ts';
import { layoutPreview, type PreviewLayout } from './layout-preview.ts';
import { dangers } from './dangers.ts';
import { csrfField, dangerForm, notice } from './widgets.ts';

const enc = encodeURIComponent;

/** The documented example card (docs/examples/card.json), offered to start from. */
export const EXAMPLE_DEFINITION = JSON.stringify(
  {
    id: 'math-g7-unit3',
    title: 'Grade 7 Mathematics - Unit 3 feedback',
    qrcode: 'https://school.example/hw/2024/g7/unit3?class=7B',
    student_number: { type: 'bubbles', digits: 8 },
    duplex: true,
    chapters: [
      { title: 'Fractions', areas: 12 },
      { title: 'Decimals', areas: 15 },
      { title: 'Percentages', areas: 20, columns: 10 },
      { title: 'Ratios', areas: 8 },
      { title: 'Word problems', areas: 30 },
      { title: 'Geometry review', areas: 45, new_side: true },
      { title: 'Self-assessment', areas: 5, columns: 5 },
    ],
  },
  null,
  2,
);

export interface TemplateForm {
  definition: string;
  students: string;
}

export function templatesView(
  list: api.CardTemplateList,
  csrf: string,
  form: TemplateForm,
  msg?: string,
  error?: string,
): Html {
  return html`${notice(msg)}<h1>Card templates <span class="muted">(${list.templates.length})</span></h1>
<table id="templates"><thead><tr><th>Template</th><th>Card</th><th>Created</th><th>PDF</th></tr></thead><tbody>
${list.templates.map(
  (
    t,
  ) => html`<tr class="template" data-id="${t.template_id}"><td><a class="template-link" href="/console/templates/${enc(t.template_id)}"><code>${t.template_id}</code></a></td>
<td class="card-id">${t.card_id}</td><td>${when(t.created_at)}</td><td><a class="download" href="${t.pdf_url}">download PDF</a></td></tr>`,
)}
</tbody></table>
${list.templates.length === 0 ? html`<p class="muted">No card template yet. Recognition reads only cards of this application's templates.</p>` : ''}
<div class="card mt" id="create-template"><h2>Create a card template</h2>
${error ? html`<div class="flash bad" role="alert" id="template-error">${error}</div>` : ''}
<form method="post" action="/console/templates/create">${csrfField(csrf)}
<label for="definition">Card definition (JSON, as in <code>docs/cards.md</code>; the same rules as <code>POST /api/application/card/template/create</code>)</label>
<textarea id="definition" name="definition" rows="16" required spellcheck="false">${form.definition}</textarea>
<label for="students">Personalised cards (optional): one student a line, <code>student id, name</code></label>
<textarea id="students" name="students" rows="4" spellcheck="false">${form.students}</textarea>
<button id="create-template-button" type="submit">Create</button></form></div>`;
}

export function templateView(t: api.CardTemplateView, csrf: string, msg?: string): Html {
  const layout = (t.layout ?? {}) as PreviewLayout & {
    title?: string;
    sheets?: number;
    duplex?: boolean;
    student_number?: { type?: string; digits?: number };
  };
  return html`<p><a href="/console/templates">← Card templates</a></p>${notice(msg)}
<h1>Card template <code id="template-id">${t.template_id}</code></h1>
<div class="grid">
<div class="card"><h2>Template</h2><dl>
<dt>Card</dt><dd id="template-card">${t.card_id}</dd><dt>Title</dt><dd id="template-title">${layout.title ?? '—'}</dd>
<dt>Created</dt><dd>${when(t.created_at)}</dd><dt>Sheets</dt><dd>${layout.sheets ?? '—'} ${layout.duplex ? '(duplex)' : '(one side each)'}</dd>
<dt>Student number</dt><dd>${layout.student_number ? `${layout.student_number.type ?? ''}, ${layout.student_number.digits ?? '?'} digits` : '—'}</dd>
</dl>
<p><a id="download-pdf" class="download" href="${t.pdf_url}">Download the PDF</a> <span class="muted">(A4, print at 100 %; the link works for an hour)</span></p>
<p>${dangerForm(dangers.deleteTemplate(t), csrf)}</p>
<p class="muted">Pages already read keep their results; cards of a deleted template are no longer recognized.</p></div>
<div class="card"><h2>Chapters</h2><table id="chapters"><thead><tr><th>#</th><th>Title</th><th>Areas</th></tr></thead><tbody>
${(layout.chapters ?? []).map((c) => html`<tr><td>${c.chapter}</td><td>${c.title}</td><td>${c.areas}</td></tr>`)}
</tbody></table></div>
</div>
<div class="card"><h2>Layout</h2><p class="muted">Where the recognizer looks on each side: corner marks, the identification strip, the QR code, the student number and the answer areas.</p>
${layoutPreview(layout)}</div>`;
}
