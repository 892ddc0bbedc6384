// Card templates over the API (docs/cards.md, "Card templates"): recognition create carries
// only a callback URL, so an application keeps its templates here, and its pages are read
// only against them. A template is a card definition's layout (its id is the layout id printed
// on every side) and the printable PDF, kept in the blob store.
import { ApiError, type api } from '@boxhub/protocol';
import { CardDefinitionError, generateTemplate, LayoutError, type Layout } from '@boxhub/recognizer';
import type { Clock } from '../../clock.ts';
import type { CardTemplateRow } from '../../db/schema.ts';
import type { BlobStore } from '../../storage/blob-store.ts';
import type { RecognitionRepository } from './repository.ts';

export const TEMPLATES_PER_APP = 100;
const PDF_TTL_MS = 60 * 60_000;

const pdfKey = (appId: string, templateId: string) => `cards/${appId}/${templateId}/card.pdf`;

export class CardTemplateService {
  private readonly repo: RecognitionRepository;
  private readonly blobs: BlobStore;
  private readonly clock: Clock;

  constructor(repo: RecognitionRepository, blobs: BlobStore, clock: Clock) {
    this.repo = repo;
    this.blobs = blobs;
    this.clock = clock;
  }

  async create(appId: string, body: api.CardTemplateCreateBody): Promise<api.CardTemplateView> {
    let made: { pdf: Uint8Array; layout: Layout };
    try {
      made = await generateTemplate(body.definition, body.students ? { students: body.students } : {});
    } catch (e) {
      if (e instanceof CardDefinitionError)
        throw new ApiError('CARD_DEFINITION_INVALID', `definition: ${e.problems.join('; ')}`, { problems: e.problems });
      if (e instanceof LayoutError)
        throw new ApiError('CARD_DEFINITION_INVALID', `definition: ${e.message}`, { problems: [e.message] });
      throw e;
    }
    const { layout } = made;
    const existing = await this.repo.template(this.repo.db, appId, layout.layout_id);
    if (!existing && (await this.repo.countTemplates(this.repo.db, appId)) >= TEMPLATES_PER_APP) {
      throw new ApiError(
        'CARD_TEMPLATE_LIMIT',
        `this application has ${TEMPLATES_PER_APP} card templates, the most it may keep; delete some with /api/application/card/template/delete`,
      );
    }
    // The PDF first (a personalised set replaces the previous PDF; the layout is the same),
    // then the row: a row never points at a missing file.
    const key = pdfKey(appId, layout.layout_id);
    await this.blobs.put(key, Buffer.from(made.pdf), { contentType: 'application/pdf' });
    const row: CardTemplateRow = {
      app_id: appId,
      template_id: layout.layout_id,
      card_id: layout.card_id,
      layout: JSON.stringify(layout),
      pdf_key: key,
      created_at: this.clock.now(),
    };
    await this.repo.addTemplate(this.repo.db, row);
    return this.view(existing ?? row, true);
  }

  async list(appId: string): Promise<api.CardTemplateList> {
    const rows = await this.repo.templates(this.repo.db, appId);
    return { templates: await Promise.all(rows.map((r) => this.view(r, false))) };
  }

  async get(appId: string, templateId: string): Promise<api.CardTemplateView> {
    const row = await this.repo.template(this.repo.db, appId, templateId);
    if (!row) throw new ApiError('NOT_FOUND', `no card template '${templateId}' in this application`);
    return this.view(row, true);
  }

  /** Pages already read keep their results; pages read after this no longer match the card. */
  async delete(appId: string, templateId: string): Promise<void> {
    const row = await this.repo.template(this.repo.db, appId, templateId);
    if (!row || !(await this.repo.deleteTemplate(this.repo.db, appId, templateId)))
      throw new ApiError('NOT_FOUND', `no card template '${templateId}' in this application`);
    await this.blobs.deletePrefix(`cards/${appId}/${templateId}`);
  }

  private async view(r: CardTemplateRow, withLayout: boolean): Promise<api.CardTemplateView> {
    const pdf_url = await this.blobs.downloadUrl(r.pdf_key, {
      fileName: `card-${r.card_id}-${r.template_id}.pdf`,
      contentType: 'application/pdf',
      expiresInMs: PDF_TTL_MS,
    });
    return {
      template_id: r.template_id,
      card_id: r.card_id,
      created_at: Number(r.created_at),
      pdf_url,
      ...(withLayout ? { layout: JSON.parse(r.layout) as unknown } : {}),
    };
  }
}
