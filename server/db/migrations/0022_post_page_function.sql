-- The page of a board list without a label, `q` or `verified` filter: the ids of one page, walked in
-- the sort's list index (posts_list_*_idx). Inside the list statement this walk carries `LIMIT $n
-- OFFSET $m`, and PostgreSQL's generic plan for an unknown LIMIT assumes a tenth of an average board:
-- in a workspace with one board of 100,000 posts that is 5,010 rows, costed far above a plan for 20,
-- so PostgreSQL planned the seven-table statement afresh on every request (1.5 to 9 ms) rather than
-- reuse it. Behind a function the statement sees an array of about ten ids whatever the board, its
-- generic plan is the one it would choose for any page and is reused; only this one-table walk is
-- planned for the request's page. One static query per sort, each matching its index, so PL/pgSQL
-- keeps each one's plan per connection. `NULL` for the status means no status filter (an unknown
-- status is passed as '' and matches nothing).
CREATE FUNCTION chorus_post_page(list_board text, list_status text, list_sort text, page_limit int, page_offset int) RETURNS text[] LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF list_sort = 'top' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY vote_count DESC, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  ELSIF list_sort = 'trending' THEN
    RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
      ORDER BY trending DESC NULLS LAST, created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
  END IF;
  RETURN ARRAY(SELECT id FROM posts WHERE board_id = list_board AND merged_into_id IS NULL AND (list_status IS NULL OR status_id = list_status)
    ORDER BY created_at DESC, id DESC LIMIT page_limit OFFSET page_offset);
END $$;
