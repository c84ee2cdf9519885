import { sql } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { compiledSql } from '../../db/compiled.ts'
import { postItemJson } from './queries.ts'

const param = sql.placeholder

/**
 * A new post in one statement (docs/architecture.md#creating-a-post): the board, the status (by id or name,
 * or the default) and the labels looked up, the post row, its labels and its first status-history entry
 * inserted, the post as the team reads it (`postItemJson`: the item the read model's BEFORE INSERT trigger
 * rendered on the new row, migration 0060) and, when `announce`, its `post.created` outbox row written from
 * it. One round trip and no explicit transaction: a statement is all-or-nothing by itself. No row comes back
 * when the board, the status or a label is unknown (the caller then finds which, see `createPost`).
 *
 * Every statement of a WITH sees the same snapshot, so the rendering cannot read the new row from its
 * table: the CTE that inserts `posts` is named after it and returns its columns, so `postItemJson` (which
 * reads "posts") resolves to the new row. An INSERT's target is always the table (a CTE name never hides a table there).
 */
// Without labels the statement leaves post_labels alone: its statement-level triggers (label ids, the public
// cache's notice) would run for an insert of no rows, a third of the statement's cost (BENCHMARKS.md).
const statement = (labelled: boolean) => (db: Db | Tx) => sql`
  with board as (select id from boards where workspace_id = ${param('workspaceId')} and slug = ${param('boardSlug')}),
  status as (
    select id from statuses where workspace_id = ${param('workspaceId')}
      and case when ${param('status')}::text is null then is_default else id = ${param('status')} or lower(name) = lower(${param('status')}) end
    limit 1),
  label as (select id from labels where workspace_id = ${param('workspaceId')} and slug = any(${param('labels')}::text[])),
  "posts" as (
    insert into posts (id, workspace_id, board_id, title, body, status_id, author_user_id, author_end_user_id, author_key_id, author_name, label_ids, language, moderation)
    select ${param('id')}, ${param('workspaceId')}, board.id, ${param('title')}, ${param('body')}, status.id, ${param('authorUserId')}, ${param('authorEndUserId')},
      ${param('authorKeyId')}, ${param('authorName')}, array(select id from label order by id collate "C"), ${param('language')}, ${param('moderation')}
    from board, status
    where (select count(*) from label) = (select count(distinct slug) from unnest(${param('labels')}::text[]) slug)
    returning *),
  ${labelled ? sql`"post_labels" as (insert into post_labels (post_id, label_id) select "posts".id, label.id from "posts", label returning post_id, label_id),` : sql``}
  first_status as (
    insert into status_changes (id, post_id, to_status_id, changed_by_user_id, changed_by_key_id)
    select ${param('statusChangeId')}, id, status_id, ${param('changedByUserId')}, ${param('changedByKeyId')} from "posts"),
  rendered as (select ${postItemJson} as json from "posts"),
  event as (
    insert into events (id, workspace_id, type, data)
    select ${param('eventId')}, ${param('workspaceId')}, 'post.created', ('{"post":' || json || '}')::jsonb from rendered where ${param('announce')}::boolean)
  select json from rendered`

const labelled = compiledSql('create_post_labelled', statement(true))
const plain = compiledSql('create_post', statement(false))
export const createPostStatement = (db: Db | Tx, labels: string[]) => (labels.length ? labelled : plain)(db)
