// The dashboard's addresses, plain string functions: e-mails sent from the background worker link to
// them without loading the pages (like portal/links.ts).
export const DASHBOARD = '/dashboard'
export const wsPath = (slug: string) => `${DASHBOARD}/${slug}`
export const postPath = (slug: string, postId: string) => `${wsPath(slug)}/posts/${postId}`
