// The review page's overlay and area checkboxes (review-views.ts), part of console.css.
export const REVIEW_CSS = `
.page-svg { width:100%; height:auto; display:block; border:1px solid var(--line); background:#fff; }
.page-img { max-width:100%; height:auto; }
.page-svg .ov-area ellipse { fill:none; stroke-width:3; }
.page-svg .ov-filled ellipse { stroke:#1565c0; stroke-width:5; fill:#1565c0; fill-opacity:.15; }
.page-svg .ov-uncertain ellipse { stroke:#e65100; stroke-width:6; }
.page-svg .ov-empty ellipse { stroke:#9e9e9e; }
.page-svg .ov-score { fill:#e65100; font-size:26px; font-weight:600; }
.page-svg .ov-qr { fill:none; stroke:#6a1b9a; stroke-width:5; stroke-dasharray:14 8; }
.page-svg .ov-student { fill:none; stroke:#2e7d32; stroke-width:5; stroke-dasharray:14 8; }
.area-pick { display:flex; width:100%; height:100%; align-items:center; justify-content:center; cursor:pointer; border-radius:50%; }
.area-pick:has(input:checked) { background:rgba(21,101,192,.35); }
.area-pick input { width:45%; height:60%; margin:0; cursor:pointer; }
.legend .key { padding:0 .4rem; border:2px solid; border-radius:8px; margin-right:.3rem; }
.legend .filled { border-color:#1565c0; } .legend .uncertain { border-color:#e65100; } .legend .empty { border-color:#9e9e9e; }
.legend .student { border-color:#2e7d32; border-style:dashed; } .legend .qr { border-color:#6a1b9a; border-style:dashed; }
label.not-a-card { display:block; margin:.4rem 0; }
`;
