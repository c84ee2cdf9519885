// The panel's stylesheet (inside the loader's shadow root) and the workspace's accent colour on it.

const DARK = '--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--line:#4b5563;--soft:#1f2937;--accent:#818cf8;--on-accent:#111827;--danger:#fca5a5;--ok:#6ee7b7'
export const CSS = `
.panel{--bg:#fff;--fg:#111827;--muted:#4b5563;--line:#d1d5db;--soft:#f3f4f6;--accent:#4f46e5;--on-accent:#fff;--danger:#b91c1c;--ok:#047857}
.panel.dark{${DARK}}
@media (prefers-color-scheme:dark){.panel.auto{${DARK}}}
.panel{all:initial;position:fixed;bottom:76px;right:20px;z-index:1;display:flex;flex-direction:column;width:min(400px,calc(100vw - 32px));height:min(640px,calc(100vh - 110px));box-sizing:border-box;background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.28);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;overflow:hidden}
.panel.bottom-left{right:auto;left:20px}.panel.top-right{bottom:auto;top:76px}.panel.top-left{bottom:auto;top:76px;right:auto;left:20px}
.panel[hidden],[hidden]{display:none!important}
:where(.panel) *{box-sizing:border-box;font:inherit;color:inherit;margin:0}
header{display:flex;align-items:center;justify-content:space-between;gap:8px;padding:12px 16px 0}
h2{font-size:17px;font-weight:700}
.brand{display:flex;align-items:center;gap:10px;min-width:0}
.logo{width:28px;height:28px;object-fit:contain;border-radius:6px}
h3{font-size:12px;font-weight:700;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin-bottom:10px}
h4{font-size:15px;font-weight:700}
[role=tablist]{display:flex;gap:4px;padding:8px 12px 0;border-bottom:1px solid var(--line)}
[role=tab]{padding:8px 10px;border-bottom:3px solid transparent;border-radius:6px 6px 0 0;font-weight:600;color:var(--muted)}
[role=tab][aria-selected=true]{border-color:var(--accent);color:var(--fg)}
.body{flex:1;overflow-y:auto;padding:12px 16px 16px}
.view{display:flex;flex-direction:column}
button{cursor:pointer;border:0;background:none;border-radius:8px;text-align:start}
button:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.x{width:32px;height:32px;font-size:22px;line-height:1;color:var(--muted);text-align:center}
.x:hover,[role=tab]:hover{background:var(--soft)}
ul{list-style:none;padding:0;margin:0 0 12px;display:flex;flex-direction:column;gap:8px}
li{display:flex;align-items:center;gap:12px;padding:8px;border:1px solid var(--line);border-radius:10px}
li>div{min-width:0;flex:1}
.vote{display:flex;flex-direction:column;align-items:center;min-width:46px;padding:4px 6px;border:1px solid var(--line);background:var(--soft);font-weight:700;font-size:13px;line-height:1.2}
.vote[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:var(--on-accent)}
.t{font-weight:600;overflow-wrap:anywhere;padding:0}
.t:hover{text-decoration:underline}
.muted{color:var(--muted);font-size:12px}
.team{display:inline-block;padding:0 6px;border-radius:4px;background:var(--accent);color:var(--on-accent);font-weight:600}
.sec{align-self:flex-start;padding:6px 12px;border:1px solid var(--line);font-weight:600;font-size:13px}
.sec:hover{background:var(--soft)}
form{display:flex;flex-direction:column;gap:10px;padding-top:14px;border-top:1px solid var(--line)}
label{display:flex;flex-direction:column;gap:4px;font-weight:600;font-size:13px}
.row{flex-direction:row;align-items:center;gap:8px;margin-bottom:10px}
input,textarea,select{width:100%;padding:8px 10px;border:1px solid var(--line);border-radius:8px;background:var(--bg);font-weight:400;font-size:14px}
select{width:auto;flex:1}
textarea{resize:vertical;min-height:64px}
.primary{align-self:flex-start;padding:9px 18px;background:var(--accent);color:var(--on-accent);font-weight:700}
[aria-busy=true]{opacity:.6}
.similar{border:1px dashed var(--line);border-radius:10px;padding:8px}
.similar ul{margin:6px 0 0}
.similar li{padding:6px}
.error{color:var(--danger);font-size:13px}
.note{color:var(--ok);font-size:13px}
.error:empty,.note:empty{display:none}
.pre{white-space:pre-wrap;overflow-wrap:anywhere}
.detail{gap:10px}
.detail .t{font-size:17px}
.top{display:flex;gap:12px;align-items:flex-start}
section{margin-bottom:14px}
article{padding:10px 0;border-bottom:1px solid var(--line)}
.html{overflow-wrap:anywhere}.html p,.html ul{margin:6px 0}.html ul,.html ol{display:block;padding-inline-start:20px}.html ul{list-style:disc}.html ol{list-style:decimal}.html li{display:list-item;border:0;padding:0}.html a{text-decoration:underline}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:480px){.panel,.panel.bottom-left,.panel.top-right,.panel.top-left{inset:0;width:100%;height:100%;border:0;border-radius:0}.list form{order:-1;border-top:0;padding:0 0 14px;margin-bottom:14px;border-bottom:1px solid var(--line)}}
`

/** Black or white, whichever reads better on the workspace's accent colour (WCAG relative luminance). */
function onAccent(hex: string) {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const c = parseInt(hex.slice(at, at + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  const l = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? '#000' : '#fff'
}

/** The workspace's accent colour (`#rrggbb`, else the default stays) on the panel and, for the launcher, on the loader's host. */
export function applyAccent(accent: string | null | undefined, panel: HTMLElement, host: HTMLElement) {
  if (!accent || !/^#[0-9a-f]{6}$/i.test(accent)) return
  for (const [name, value] of [['accent', accent], ['on-accent', onAccent(accent)]] as const) {
    panel.style.setProperty(`--${name}`, value)
    host.style.setProperty(`--chorus-${name}`, value)
  }
}
