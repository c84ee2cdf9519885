// WCAG 2 colour arithmetic for `#rrggbb` colours: the portal picks the text colour on the brand colour
// with it, and the dashboard's Branding page shows the same contrast figures.

export const HEX_COLOR = /^#[0-9a-fA-F]{6}$/

/** Relative luminance (WCAG 2.x). */
export function luminance(hex: string) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
}

/** The contrast ratio of two colours, 1 to 21. */
export function contrastRatio(a: string, b: string) {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (light! + 0.05) / (dark! + 0.05)
}

/** Black or white, whichever reads better on `hex`, with its contrast ratio. */
export function textOn(hex: string) {
  const white = contrastRatio(hex, '#ffffff')
  const black = contrastRatio(hex, '#000000')
  return white >= black ? { color: '#ffffff', ratio: white } : { color: '#000000', ratio: black }
}
