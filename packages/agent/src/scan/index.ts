// The box's scan page pipeline (docs/scanning.md, "On the box"): small parts the job runner
// composes (the media helpers of media/, the item rule), and assembleItems, which composes them
// for one batch of paper.
export {
  BLANK_RULE,
  detectBlank,
  greyThumbnail,
  inkCoverage,
  type BlankRule,
  type BlankVerdict,
  type GreyImage,
  type InkMeasure,
} from '../media/blank.ts';
export { PASS_THROUGH_SLACK, pageToJpeg, type PageJpeg } from '../media/jpeg.ts';
export { estimateQuality, jpegInfo, type JpegInfo } from '../media/jpeg-info.ts';
export {
  PDF_FILE_OVERHEAD,
  PDF_PAGE_OVERHEAD,
  PdfItemWriter,
  type PdfItemFile,
  type PdfPageSpec,
} from '../media/pdf-writer.ts';
export {
  capsOf,
  closesNow,
  ITEM_LIMITS,
  ITEM_RULE,
  startsNewItem,
  type ItemLimits,
  type ItemRule,
  type NextPage,
  type OpenItem,
} from './item-rule.ts';
export { assembleItems, type AssembledItem, type AssembleOptions, type PageOutcome } from './assemble.ts';
export { putFile, type PutFileOptions, type PutFileResult } from '../transfer/put-file.ts';
