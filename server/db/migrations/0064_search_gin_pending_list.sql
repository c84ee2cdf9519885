-- A GIN index with fastupdate (the default) keeps new entries in a pending list until it passes
-- gin_pending_list_limit (4 MB by default) or a vacuum merges it, and every search reads the whole list. Every
-- new post is searched for duplicates right after it is created, and the public search and the draft form search
-- too, so the list was read on each of them: after a burst of 5,000 posts it held 110 pages, ~2.4 ms of every
-- duplicate check (BENCHMARKS.md). At 64 kB (the least PostgreSQL allows) a search reads at most 8 pages, and
-- the insert that fills the list merges it: a batch of entries, cheaper than inserting each (fastupdate off).
ALTER INDEX "posts_search_idx" SET (gin_pending_list_limit = 64);--> statement-breakpoint
ALTER INDEX "posts_title_trgm_idx" SET (gin_pending_list_limit = 64);
