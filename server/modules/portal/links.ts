// Where a workspace's portal lives, for its own pages (paths) and for everything that links into it from
// outside (absolute URLs in mail, feeds, chat messages, tracker issues and assistants' answers).

export const portalPath = (slug: string) => `/portal/${slug}`

export const portalBoardPath = (slug: string, boardSlug: string) => `${portalPath(slug)}/boards/${boardSlug}`

export const portalChangelogPath = (slug: string) => `${portalPath(slug)}/changelog`

export const portalPostPath = (slug: string, postId: string) => `${portalPath(slug)}/posts/${postId}`

export const portalPostUrl = (baseUrl: string, slug: string, postId: string) => `${baseUrl}${portalPostPath(slug, postId)}`

/** The changelog page, or one entry on it (`#{entry_id}`). */
export const portalChangelogUrl = (baseUrl: string, slug: string, entryId?: string) =>
  `${baseUrl}${portalChangelogPath(slug)}${entryId === undefined ? '' : `#${entryId}`}`
