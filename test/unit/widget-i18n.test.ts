import { describe, expect, test } from 'bun:test'
import { LANGUAGES, pickLocale, translator } from '../../widget/src/i18n.ts'

const ALL = ['en', 'de', 'fr', 'es', 'ja', 'ar', 'he']

describe('widget languages: happy', () => {
  test('every language has every word, and keeps the {0} placeholder where English has one', () => {
    const english = LANGUAGES.en as Record<string, string>
    expect(Object.keys(LANGUAGES).sort()).toEqual([...ALL].sort())
    for (const lang of ALL) {
      const words = LANGUAGES[lang] as Record<string, string>
      expect(Object.keys(words).sort(), lang).toEqual(Object.keys(english).sort())
      for (const [key, text] of Object.entries(english)) expect(words[key]!.includes('{0}'), `${lang}.${key}`).toBe(text.includes('{0}'))
    }
  })

  test('data-locale first, then the browser\'s languages by primary subtag, else English', () => {
    expect(pickLocale(['de', 'fr-FR'])).toBe('de')
    expect(pickLocale([undefined, 'fr-CA', 'en'])).toBe('fr')
    expect(pickLocale(['pt-BR', 'ES_mx'])).toBe('es')
    expect(pickLocale(['xx', 'pt'])).toBe('en')
    expect(pickLocale([])).toBe('en')
  })

  test('Arabic and Hebrew are right to left, the others left to right', () => {
    for (const lang of ALL) expect(translator(lang).dir).toBe(['ar', 'he'].includes(lang) ? 'rtl' : 'ltr')
  })
})

describe('widget languages: errors', () => {
  test('an unknown language code gets the English words', () => {
    expect(translator('zz').t('submit')).toBe('Submit')
    expect(translator('zz').lang).toBe('zz')
  })
})
