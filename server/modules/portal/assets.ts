import { gzipSync } from 'node:zlib'

// The portal's only stylesheet and script, served from memory with content-hashed URLs. The script
// only enhances (votes without a reload); every action works as a plain form without it.

const CSS = `
:root{--bg:#f8fafc;--card:#fff;--fg:#0f172a;--muted:#475569;--line:#cbd5e1;--accent:#4338ca;--on-accent:#fff;--ok:#166534;--ok-bg:#dcfce7;--bad:#991b1b;--bad-bg:#fee2e2;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0b1120;--card:#111827;--fg:#f1f5f9;--muted:#cbd5e1;--line:#475569;--ok:#bbf7d0;--ok-bg:#14532d;--bad:#fecaca;--bad-bg:#7f1d1d}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg);overflow-wrap:anywhere}
a{color:inherit;text-underline-offset:.15em}
h1 a,h2 a,h3 a,nav a,.crumb a{text-decoration:none}h2 a:hover,h3 a:hover,nav a:hover,.crumb a:hover{text-decoration:underline}
.crumb a{color:var(--muted);font-weight:600}
:focus-visible{outline:3px solid var(--fg);outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem;z-index:1}
.wrap{max-width:60rem;margin:0 auto;padding:0 1rem}
header.top{background:var(--card);border-bottom:1px solid var(--line)}
header.top .wrap{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem;padding:.75rem 1rem}
.brand{display:flex;align-items:center;gap:.5rem;font-weight:700;font-size:1.15rem;text-decoration:none}
.brand img{width:2rem;height:2rem;object-fit:contain;border-radius:.25rem}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
nav a{display:inline-block;padding:.25rem 0;border-bottom:3px solid transparent}
nav a[aria-current]{font-weight:700;border-bottom-color:var(--accent)}nav a[aria-current]:hover{text-decoration:none}
main.wrap{padding:2rem 1rem 3rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 .75rem}h2{font-size:1.2rem;margin:2rem 0 .75rem}
.muted{color:var(--muted)}
.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:1rem}
.card>:first-child,.post .body>:first-child{margin-top:0}.card>:last-child,.post .body>:last-child{margin-bottom:0}
.card+.card,.card+section,section+.card{margin-top:1rem}.list>li.card,.columns>.card{margin-top:0}
.post .body p{margin:.35rem 0}
ul.list,ol.list{list-style:none;margin:0;padding:0;display:grid;gap:.75rem}
.post{display:flex;gap:.75rem;align-items:flex-start}
.post .body{flex:1;min-width:0}
.post h3{font-size:1.05rem;margin:0 0 .25rem}
.vote button,.votes{display:flex;flex-direction:column;align-items:center;min-width:3.25rem;padding:.35rem .5rem;border:1px solid var(--line);border-radius:.5rem;background:var(--card);color:var(--fg);font:inherit;font-weight:700;cursor:pointer;text-decoration:none}
.vote button[aria-pressed=true]{background:var(--accent);color:var(--on-accent);border-color:var(--accent)}
.badge{display:inline-block;padding:0 .5rem;border-radius:1rem;font-size:.85rem;font-weight:600;border:1px solid var(--line)}
.k-planned{background:#dbeafe;color:#1e3a8a}.k-in_progress{background:#fef3c7;color:#78350f}.k-complete{background:#dcfce7;color:#14532d}.k-closed{background:#e5e7eb;color:#1f2937}.k-open{background:#f1f5f9;color:#0f172a}
form.stack{display:grid;gap:.75rem}
label{font-weight:600;display:block;margin-bottom:.2rem}
input,textarea,select{font:inherit;width:100%;padding:.5rem;border:1px solid var(--muted);border-radius:.375rem;background:var(--card);color:var(--fg)}
input,select{height:2.75rem}
textarea{min-height:6rem;resize:vertical}
.btn{display:inline-block;padding:.55rem 1rem;font:inherit;font-weight:600;border-radius:.375rem;border:1px solid var(--accent);background:var(--accent);color:var(--on-accent);cursor:pointer;text-decoration:none}
.btn.plain{background:transparent;color:var(--fg);border-color:var(--line)}
.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.75rem;align-items:end;margin-bottom:1rem}
.filters .btn{height:2.75rem;width:100%}
.alert,.notice{padding:.75rem 1rem;border-radius:.5rem;margin:0 0 1rem}
.alert{background:var(--bad-bg);color:var(--bad)}.notice{background:var(--ok-bg);color:var(--ok)}
.columns{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:1.25rem;align-items:start}
.column>h2{margin:0 0 .75rem;padding-top:.5rem;border-top:4px solid var(--line)}
.col-planned>h2{border-top-color:#3b82f6}.col-in_progress>h2{border-top-color:#f59e0b}.col-complete>h2{border-top-color:#22c55e}
.rm-card h3{font-size:1rem;margin:0 0 .35rem}.meta{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .75rem;margin:0}.meta>span{white-space:nowrap}
.empty{color:var(--muted);text-align:center;padding:1.5rem 1rem}.empty a{color:var(--fg);font-weight:600}
.pages{display:flex;gap:1rem;justify-content:center;align-items:center;margin-top:1.5rem}
.text{white-space:pre-wrap}
.entry h2{margin-top:0}.entry .content img{max-width:100%}
.history{margin:0;padding-left:1.25rem}
footer{padding:2rem 1rem;color:var(--muted);font-size:.9rem;border-top:1px solid var(--line)}
footer form{display:inline}
`.trim()

const JS = `
document.addEventListener('submit',async e=>{
const f=e.target;if(!f.matches('form.vote'))return
const b=f.querySelector('button');if(b.disabled)return
e.preventDefault();b.disabled=true
try{const r=await fetch(f.action,{method:'POST',body:new URLSearchParams(new FormData(f)),headers:{accept:'application/json'}})
if(!r.ok)return f.submit()
const d=await r.json()
for(const o of document.querySelectorAll('form.vote[action="'+f.getAttribute('action')+'"] button')){o.setAttribute('aria-pressed',d.voted);o.querySelector('.n').textContent=d.votes;o.querySelector('.sr').textContent=(d.votes==1?' vote':' votes')+'. Vote for '+o.dataset.title}
const l=document.getElementById('live');if(l)l.textContent=d.voted?'Vote added':'Vote removed'}
catch{f.submit()}finally{b.disabled=false}})
`.trim()

export interface Asset { body: string; gzip: Uint8Array<ArrayBuffer>; type: string; hash: string; path: string }

const hashOf = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex').slice(0, 16)

function asset(name: string, body: string, type: string): Asset {
  const hash = hashOf(body)
  return { body, gzip: new Uint8Array(gzipSync(body, { level: 9 })), type, hash, path: `/portal/_/${name}?v=${hash}` }
}

/** `/portal/_/…`: `_` is no workspace slug, so these never shadow a portal. */
export const ASSETS = {
  'portal.css': asset('portal.css', CSS, 'text/css; charset=utf-8'),
  'portal.js': asset('portal.js', JS, 'text/javascript; charset=utf-8'),
} satisfies Record<string, Asset>

export type AssetName = keyof typeof ASSETS

/** Everything the portal ships to a browser besides the page itself, gzipped: the budget is 10 KiB. */
export const ASSET_BUDGET_BYTES = 10 * 1024

export function serveAsset(name: AssetName, request: Request) {
  const item = ASSETS[name]
  const versioned = new URL(request.url).searchParams.get('v') === item.hash
  const headers: Record<string, string> = {
    'content-type': item.type,
    'cache-control': versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
    etag: `"${item.hash}"`,
    vary: 'Accept-Encoding',
    'x-content-type-options': 'nosniff',
  }
  if (request.headers.get('if-none-match') === headers.etag) return new Response(null, { status: 304, headers })
  if (/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) return new Response(item.gzip, { headers: { ...headers, 'content-encoding': 'gzip' } })
  return new Response(item.body, { headers })
}
