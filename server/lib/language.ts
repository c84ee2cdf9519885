// Which language a post is written in, so it is indexed with the matching text-search configuration
// (migration 0030; docs/duplicates.md#languages). The seven languages the widget speaks; anything else
// is indexed as the language we guess, or English.

export const LANGUAGES = ['en', 'de', 'fr', 'es', 'ja', 'ar', 'he'] as const
export type Language = (typeof LANGUAGES)[number]

const isLanguage = (tag: string): tag is Language => (LANGUAGES as readonly string[]).includes(tag)

/** `de-CH`, `DE`, `de_CH` → `de` when it is one of ours; else undefined. */
export function languageOfTag(tag: string | null | undefined): Language | undefined {
  const primary = tag?.trim().toLowerCase().split(/[-_]/)[0]
  return primary && isLanguage(primary) ? primary : undefined
}

/** The first of a `Content-Language` header's tags (`de-DE, en`) that is ours. */
export function languageOfHeader(header: string | null | undefined): Language | undefined {
  for (const tag of header?.split(',') ?? []) {
    const language = languageOfTag(tag)
    if (language) return language
  }
  return undefined
}

// Scripts that name their language outright: kana or kanji → Japanese, Arabic script → Arabic, Hebrew script → Hebrew.
const SCRIPTS: [Language, RegExp][] = [
  ['ja', /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]/gu],
  ['ar', /[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]/gu],
  ['he', /[\u0590-\u05ff\ufb1d-\ufb4f]/gu],
]

// The commonest short function words of each Latin-script language, each frequent in one language and
// rare in the others ("de", "la", "en" are shared by French and Spanish and left out): one vote each.
const STOPWORDS: Record<'en' | 'de' | 'fr' | 'es', Set<string>> = {
  en: new Set('the and is are to of in it for with this that when would should could can please not be on my we our have there'.split(' ')),
  de: new Set('der die das und ist nicht ich wir ein eine einen mit für auf bitte wenn auch sich zu wäre kann können im dem den es sie'.split(' ')),
  fr: new Set('le les et est une des du pour avec dans pas nous je que qui sur il ce cette au aux être serait peut ajouter'.split(' ')),
  es: new Set('el los las y es una del para con por que no nosotros yo sería puede como su al se lo añadir poder'.split(' ')),
}
// Letters only one of them uses.
const LETTERS: [keyof typeof STOPWORDS, RegExp][] = [['de', /[äöüß]/giu], ['fr', /[àâçèêëîïôœùû]/giu], ['es', /[ñ¿¡áíóú]/giu]]

/**
 * A deterministic guess, no model: a script that names its language outright wins when it is at least a
 * fifth of the letters (Japanese text quotes Latin product names); Latin text is scored by its common
 * function words (one point each) and language-specific letters (half a point each). No evidence → `fallback`.
 */
export function detectLanguage(text: string, fallback: Language = 'en'): Language {
  const sample = text.slice(0, 4000)
  const letters = (sample.match(/\p{L}/gu) ?? []).length
  if (letters === 0) return fallback
  let best: [Language, number] | undefined
  for (const [language, pattern] of SCRIPTS) {
    const count = sample.match(pattern)?.length ?? 0
    if (count / letters >= 0.2 && (!best || count > best[1])) best = [language, count]
  }
  if (best) return best[0]
  const words = sample.toLowerCase().match(/\p{L}+/gu) ?? []
  const scores = { en: 0, de: 0, fr: 0, es: 0 }
  for (const word of words) for (const language of Object.keys(scores) as (keyof typeof scores)[]) if (STOPWORDS[language].has(word)) scores[language] += 1
  for (const [language, pattern] of LETTERS) scores[language] += (sample.match(pattern)?.length ?? 0) / 2
  const [top, score] = Object.entries(scores).sort((a, b) => b[1] - a[1])[0] as [Language, number]
  return score > 0 ? top : fallback
}

/** What a write says about its language: the widget's or form's `locale` first, then the request's `Content-Language`; undefined → detect from the text. */
export const writerLanguage = (locale: string | undefined, request: Request) => languageOfTag(locale) ?? languageOfHeader(request.headers.get('content-language'))
