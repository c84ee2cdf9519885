import { t } from 'elysia'
import { Enum, Integer, Timestamp } from '../../lib/schema.ts'
import { pageEnvelope, PagingQuery } from '../../lib/paging-schema.ts'
import { Locale, PostResponse, postExample } from '../posts/model.ts'

const reasonsExample = ['shared terms: dark, mode, night', 'similar title (0.52)', 'same board']

export const SimilarItem = t.Object({
  post: PostResponse,
  score: t.Number({ minimum: 0, maximum: 1, description: 'Similarity from 0 to 1 (docs/duplicates.md#the-formula); 0.4 and above is stored as a duplicate suggestion when a post is created' }),
  reasons: t.Array(t.String(), { description: 'Why it matched: the weightiest shared terms (stemmed), title similarity, same board, shared labels' }),
}, { $id: 'SimilarPost' })

export const SimilarResponse = t.Object({ items: t.Array(SimilarItem) }, {
  $id: 'SimilarPosts',
  examples: [{ items: [{ post: { ...postExample, id: 'post_0mi9x2k3aq9z8y7x6w5v4u3t2', title: 'Night theme' }, score: 0.71, reasons: reasonsExample }] }],
})

export const SimilarQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 20, description: 'How many candidates (1-20, default 5)' })),
}, { additionalProperties: false })

export const SimilarDraft = t.Object({
  title: t.String({ minLength: 1, maxLength: 200, description: 'The title being typed' }),
  body: t.Optional(t.String({ maxLength: 20_000 })),
  locale: t.Optional(Locale),
  limit: t.Optional(Integer({ minimum: 1, maximum: 20, default: 5 })),
}, { additionalProperties: false, $id: 'SimilarDraft', examples: [{ title: 'Night theme please', body: 'The white screen is too bright at night', locale: 'en' }] })

export const suggestionExample = {
  id: 'dup_0mi9x2k3aq1b2c3d4e5f6g7h8', post: { ...postExample, id: 'post_0mi9x2k3aq9z8y7x6w5v4u3t2', title: 'Night theme' }, candidate: postExample,
  score: 0.71, reasons: reasonsExample, status: 'open', created_at: '2026-11-22T09:30:00.000Z', decided_at: null,
}

export const SuggestionResponse = t.Object({
  id: t.String(),
  post: PostResponse,
  candidate: PostResponse,
  score: t.Number({ minimum: 0, maximum: 1 }),
  reasons: t.Array(t.String()),
  status: Enum(['open', 'accepted', 'dismissed']),
  created_at: Timestamp,
  decided_at: t.Nullable(Timestamp),
}, { $id: 'DuplicateSuggestion', examples: [suggestionExample], description: '`post` (the newer) seems to ask what `candidate` asks. Accepting merges `post` into `candidate`.' })

export const SuggestionPage = pageEnvelope(SuggestionResponse, 'DuplicateSuggestionPage', [{ items: [suggestionExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const SuggestionListQuery = t.Object({ ...PagingQuery }, { additionalProperties: false })
export const SuggestionParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }), suggestion_id: t.String({ maxLength: 64 }) })
