// The console's style sheet, served at /console/assets/console.css (kept in code so the built
// package carries it without a copy step).
import { REVIEW_CSS } from './review-style.ts';

export const CONSOLE_CSS = `
:root { --fg:#1d2330; --muted:#667085; --line:#d9dee7; --bg:#f6f7f9; --accent:#2456d3; --ok:#137a3d; --bad:#b42318; --warn:#a15c07; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; align-items:center; gap:1.5rem; padding:.6rem 1.5rem; background:#111827; color:#fff; }
header a { color:#e5e7eb; text-decoration:none; } header a:hover { color:#fff; text-decoration:underline; }
header .brand { font-weight:700; font-size:1.05rem; color:#fff; }
header form { margin-left:auto; } header .app { margin-left:auto; color:#9ca3af; font-size:.9rem; }
header .app + form { margin-left:0; }
main { max-width:1100px; margin:1.5rem auto; padding:0 1.5rem; }
h1 { font-size:1.4rem; margin:.2rem 0 1rem; } h2 { font-size:1.1rem; margin:1.5rem 0 .6rem; }
table { width:100%; border-collapse:collapse; background:#fff; border:1px solid var(--line); }
th,td { text-align:left; padding:.45rem .65rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#eef1f6; font-weight:600; font-size:.85rem; color:#344054; }
.card { background:#fff; border:1px solid var(--line); border-radius:6px; padding:1rem 1.2rem; margin-bottom:1rem; }
.grid { display:grid; grid-template-columns:repeat(auto-fit,minmax(300px,1fr)); gap:1rem; }
dl { display:grid; grid-template-columns:max-content 1fr; gap:.25rem 1rem; margin:0; } dt { color:var(--muted); } dd { margin:0; overflow-wrap:anywhere; }
.pill { display:inline-block; padding:.05rem .55rem; border-radius:999px; font-size:.8rem; font-weight:600; background:#eef1f6; }
.pagebar { display:flex; gap:2px; min-height:14px; margin:.4rem 0 .2rem; } .pagebar .cell { width:10px; height:14px; border-radius:2px; }
.pagebar .rec { background:var(--ok); } .pagebar .open { background:repeating-linear-gradient(45deg,#fef0c7 0 3px,#f79009 3px 5px); }
.on { background:#dcfae6; color:var(--ok); } .off { background:#fee4e2; color:var(--bad); } .wait { background:#fef0c7; color:var(--warn); }
.mt { margin-top:1rem; } .muted { color:var(--muted); } .err { color:var(--bad); } code { font-size:.85rem; overflow-wrap:anywhere; }
form.inline { display:inline; }
ul.controls { list-style:none; margin:0; padding:0; } ul.controls li { margin:.3rem 0; }
.options { display:flex; flex-wrap:wrap; gap:.3rem 1rem; margin:.5rem 0; } input[type=number] { width:5rem; padding:.4rem .5rem; border:1px solid var(--line); border-radius:4px; font:inherit; }
input[type=text],input[type=password],input[type=file] { padding:.4rem .5rem; border:1px solid var(--line); border-radius:4px; font:inherit; max-width:100%; }
button { padding:.4rem .9rem; border:0; border-radius:4px; background:var(--accent); color:#fff; font:inherit; cursor:pointer; }
button.secondary { background:#475467; } button.danger { background:var(--bad); } button:hover { filter:brightness(1.1); }
dialog.confirm { max-width:480px; border:1px solid var(--line); border-radius:6px; padding:1.2rem 1.4rem; color:var(--fg); }
dialog.confirm::backdrop { background:rgba(17,24,39,.45); } dialog.confirm p { margin:0 0 1rem; }
dialog.confirm .buttons { display:flex; justify-content:flex-end; gap:.6rem; }
.card.confirm { max-width:560px; margin:3rem auto; } .card.confirm a.cancel { margin-left:.8rem; }
.flash { padding:.6rem .9rem; border-radius:4px; margin-bottom:1rem; background:#dcfae6; color:var(--ok); }
.flash.bad { background:#fee4e2; color:var(--bad); }
.login { max-width:420px; margin:4rem auto; } .login input { width:100%; margin:.4rem 0 .8rem; }
ul.tree { margin:.2rem 0; padding-left:1.2rem; } ul.tree li { margin:.1rem 0; }
textarea { width:100%; padding:.4rem .5rem; border:1px solid var(--line); border-radius:4px; font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; margin:.3rem 0 .8rem; }
select { padding:.4rem .5rem; border:1px solid var(--line); border-radius:4px; font:inherit; background:#fff; }
label { display:inline-block; margin:.2rem 0; }
.filters a { margin-right:.8rem; text-transform:capitalize; } .filters a.current { font-weight:700; color:var(--fg); text-decoration:none; }
.pager a { margin-right:.6rem; }
ol.fills { margin:0; padding-left:1.4rem; font-size:.85rem; } ol.fills li::marker { color:var(--muted); }
.sides { display:flex; flex-wrap:wrap; gap:1rem; } figure.side { margin:0; } figure.side figcaption { color:var(--muted); font-size:.85rem; text-align:center; }
svg.layout { display:block; max-width:100%; height:auto; border:1px solid var(--line); background:#fff; }
ol.timeline { margin:0; padding-left:1.2rem; } ol.timeline li.done { color:var(--ok); } ol.timeline li.todo { color:var(--muted); }
${REVIEW_CSS}`;
