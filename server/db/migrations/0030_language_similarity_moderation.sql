-- Search in every language the widget speaks, duplicate suggestions (issue 36). Only stock contrib:
-- pg_trgm (title similarity) and unaccent, which PGlite ships as well (server/db/client.ts loads them).
-- docs/duplicates.md explains the languages, the similarity formula and the suggestion queue.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS unaccent;--> statement-breakpoint
-- One configuration per language, each a copy of PostgreSQL's with `unaccent` before the stemmer on the
-- non-ASCII word tokens (ASCII words carry no accents): "Größe" and "Grosse", "café" and "cafe" meet.
-- Japanese, Arabic and Hebrew use `chorus_simple` (no stemmer, no stop words): their term weights
-- (docs/duplicates.md) discount common words instead, and Japanese text is cut into bigrams first.
CREATE TEXT SEARCH CONFIGURATION chorus_english (COPY = english);--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION chorus_english ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION chorus_german (COPY = german);--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION chorus_german ALTER MAPPING FOR hword, hword_part, word WITH unaccent, german_stem;--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION chorus_french (COPY = french);--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION chorus_french ALTER MAPPING FOR hword, hword_part, word WITH unaccent, french_stem;--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION chorus_spanish (COPY = spanish);--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION chorus_spanish ALTER MAPPING FOR hword, hword_part, word WITH unaccent, spanish_stem;--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION chorus_simple (COPY = simple);--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION chorus_simple ALTER MAPPING FOR hword, hword_part, word WITH unaccent, simple;--> statement-breakpoint
-- Japanese is written without spaces, and PostgreSQL's parser reads a whole run of kana and kanji as one
-- word: every run is replaced by its overlapping character bigrams ("ダークモード" → "ダー ーク クモ モー ード"),
-- so a query's bigrams find the post whatever the sentence around them. Other text passes unchanged.
CREATE FUNCTION chorus_cjk_bigrams(input text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT coalesce(string_agg(
    CASE WHEN part[1] ~ '^[぀-ヿ㐀-鿿豈-﫿ｦ-ﾟ]+$' AND length(part[1]) > 1
      THEN (SELECT string_agg(substr(part[1], i, 2), ' ' ORDER BY i) FROM generate_series(1, length(part[1]) - 1) AS i)
      ELSE part[1] END, ' '), '')
  FROM regexp_matches(input, '[぀-ヿ㐀-鿿豈-﫿ｦ-ﾟ]+|[^぀-ヿ㐀-鿿豈-﫿ｦ-ﾟ]+', 'g') AS part
$$;--> statement-breakpoint
-- One expression, so PostgreSQL inlines it: text without kana or kanji (most posts) skips the split.
CREATE FUNCTION chorus_cjk_grams(input text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN input ~ '[぀-ヿ㐀-鿿豈-﫿ｦ-ﾟ]' THEN chorus_cjk_bigrams(input) ELSE coalesce(input, '') END
$$;--> statement-breakpoint
CREATE FUNCTION chorus_search_config(language text) RETURNS regconfig LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE language WHEN 'en' THEN 'chorus_english'::regconfig WHEN 'de' THEN 'chorus_german'::regconfig
    WHEN 'fr' THEN 'chorus_french'::regconfig WHEN 'es' THEN 'chorus_spanish'::regconfig ELSE 'chorus_simple'::regconfig END
$$;--> statement-breakpoint
-- The indexed document: the title weighted A (ranked above the body), in the post's own language.
CREATE FUNCTION chorus_search_document(language text, title text, body text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector(chorus_search_config(language), chorus_cjk_grams(title)), 'A')
    || setweight(to_tsvector(chorus_search_config(language), chorus_cjk_grams(body)), 'B')
$$;--> statement-breakpoint
-- A search (`q`, websearch syntax) in every configuration at once, OR'd: a German post's stems match the
-- German reading of the words, an English post's the English one, a Japanese post's the bigrams. One
-- tsquery, so the GIN index serves it whatever language each post is in.
CREATE FUNCTION chorus_search_query(q text) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT websearch_to_tsquery('chorus_english', g) || websearch_to_tsquery('chorus_german', g) || websearch_to_tsquery('chorus_french', g)
    || websearch_to_tsquery('chorus_spanish', g) || websearch_to_tsquery('chorus_simple', g)
  FROM chorus_cjk_grams(q) AS g
$$;--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "language" text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE "posts" ADD CONSTRAINT "posts_language_check" CHECK ("language" IN ('en', 'de', 'fr', 'es', 'ja', 'ar', 'he'));--> statement-breakpoint
ALTER TABLE "posts" DROP COLUMN "search";--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (chorus_search_document("language", "title", "body")) STORED;--> statement-breakpoint
CREATE INDEX "posts_search_idx" ON "posts" USING gin ("search");--> statement-breakpoint
CREATE INDEX "posts_title_trgm_idx" ON "posts" USING gin ("title" gin_trgm_ops);--> statement-breakpoint
-- A stored suggestion that `post_id` (the newer post) repeats `candidate_id`. One row per pair, whichever
-- way round it was found, so a dismissed pair is never suggested again.
CREATE TABLE "duplicate_suggestions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL REFERENCES "workspaces"("id") ON DELETE cascade,
	"post_id" text NOT NULL REFERENCES "posts"("id") ON DELETE cascade,
	"candidate_id" text NOT NULL REFERENCES "posts"("id") ON DELETE cascade,
	"score" real NOT NULL,
	"reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" text DEFAULT 'open' NOT NULL CHECK ("status" IN ('open', 'accepted', 'dismissed')),
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE UNIQUE INDEX "duplicate_suggestions_pair_idx" ON "duplicate_suggestions" (least("post_id", "candidate_id"), greatest("post_id", "candidate_id"));--> statement-breakpoint
CREATE INDEX "duplicate_suggestions_open_idx" ON "duplicate_suggestions" ("workspace_id", "created_at" DESC, "id" DESC) WHERE "status" = 'open';--> statement-breakpoint
CREATE INDEX "duplicate_suggestions_candidate_idx" ON "duplicate_suggestions" ("candidate_id");
