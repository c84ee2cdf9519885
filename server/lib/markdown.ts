// Markdown to HTML for text the team writes and the public reads (changelog entries). markdown-it is
// maintained and CommonMark-compliant; `html: false` escapes any raw HTML instead of passing it
// through, and `validateLink` lets only http(s), mailto and relative links (and images over http(s))
// become `href`/`src`, so `javascript:`, `vbscript:`, `data:` and `file:` URLs never render as links.
import type MarkdownIt from 'markdown-it'

const SAFE_LINK = /^(?:https?:|mailto:|[/#?.]|[^:/?#]*(?:[/?#]|$))/i

type Renderer = InstanceType<typeof MarkdownIt>

let renderer: Renderer | undefined

/** Built on first use: most processes never render Markdown, and the parser costs ~10 MB of memory. */
function markdown(): Renderer {
  if (renderer) return renderer
  const loaded = require('markdown-it') as typeof MarkdownIt | { default: typeof MarkdownIt }
  const Constructor = 'default' in loaded ? loaded.default : loaded
  const md = new Constructor({ html: false, linkify: true, typographer: false })
  md.validateLink = (url: string) => {
    // Strips whitespace and control characters the way browsers do before reading the scheme.
    const compact = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, '')
    return SAFE_LINK.test(compact)
  }
  // Links leave the page in a new context without the opener or a referrer.
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options))
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx]!.attrSet('rel', 'nofollow noopener noreferrer')
    return defaultLinkOpen(tokens, idx, options, env, self)
  }
  return (renderer = md)
}

export function renderMarkdown(source: string): string {
  return markdown().render(source)
}
