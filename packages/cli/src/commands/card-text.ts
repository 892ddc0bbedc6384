// One student's result as a line for a person, the same for `card run` (a callback) and
// `card recognize` (a result of the local engine).
export interface StudentResultLike {
  error_code: number;
  pages?: Array<{ page_number: number }>;
  result?: { student_id: string; fills: number[][]; uncertain?: number[][] } | null;
  detail?: string;
}

export function studentLine(s: StudentResultLike): string {
  const pages = (s.pages ?? []).map((p) => p.page_number).join(',');
  if (s.result) {
    const uncertain = (s.result.uncertain ?? []).some((u) => u.length > 0)
      ? ` (uncertain: ${JSON.stringify(s.result.uncertain)})`
      : '';
    return `student ${s.result.student_id} [pages ${pages}]: fills ${JSON.stringify(s.result.fills)}${uncertain}`;
  }
  return `error ${s.error_code} [pages ${pages || '-'}]: ${s.detail ?? 'not recognized'}`;
}
