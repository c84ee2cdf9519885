-- Erasure of one end user of a workspace (issue 39, docs/data-lifecycle.md#one-end-user). Stored
-- payloads of that workspace (outbox events, notifications, subscriber updates, stored answers) and
-- logs keep what happened, without who: every object naming the person by id becomes the
-- deleted-author object, a string equal to their id becomes null, and their address and name inside
-- any other string become "[erased]" (matched without regard to case).
CREATE FUNCTION chorus_forget_text(value text, needles text[]) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  result text := value;
  needle text;
  found int;
  start int;
BEGIN
  IF value IS NULL THEN RETURN NULL; END IF;
  FOREACH needle IN ARRAY needles LOOP
    CONTINUE WHEN needle IS NULL OR needle = '';
    start := 1;
    LOOP
      found := position(lower(needle) in lower(substr(result, start)));
      EXIT WHEN found = 0;
      found := found + start - 1;
      result := overlay(result placing '[erased]' from found for char_length(needle));
      -- Past the replacement: a needle inside "[erased]" cannot loop.
      start := found + 8;
    END LOOP;
  END LOOP;
  RETURN result;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION chorus_forget_end_user(doc jsonb, person_id text, needles text[]) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  result jsonb;
  entry record;
BEGIN
  CASE jsonb_typeof(doc)
  WHEN 'object' THEN
    IF doc->>'id' = person_id THEN
      RETURN jsonb_build_object('type', 'deleted', 'id', null, 'name', 'Deleted user', 'email', null);
    END IF;
    result := '{}'::jsonb;
    FOR entry IN SELECT key, value FROM jsonb_each(doc) LOOP
      result := result || jsonb_build_object(entry.key, chorus_forget_end_user(entry.value, person_id, needles));
    END LOOP;
    RETURN result;
  WHEN 'array' THEN
    SELECT coalesce(jsonb_agg(chorus_forget_end_user(item.value, person_id, needles) ORDER BY item.ordinality), '[]'::jsonb)
      INTO result FROM jsonb_array_elements(doc) WITH ORDINALITY AS item;
    RETURN result;
  WHEN 'string' THEN
    IF doc #>> '{}' = person_id THEN RETURN 'null'::jsonb; END IF;
    RETURN to_jsonb(chorus_forget_text(doc #>> '{}', needles));
  ELSE
    RETURN doc;
  END CASE;
END;
$$;
