-- A delivery row now lives only while it has work or a final failure to show: a successful attempt deletes
-- it (its history is the delivery log). Deleting marks the row; updating it to 'done' wrote a new row
-- version and two index entries per delivery. Rows left 'done' by earlier versions go the same way.
DELETE FROM webhook_deliveries WHERE status = 'done';
--> statement-breakpoint
-- Half-full pages leave room for a claim's lease (lease_owner, lease_until: no index covers them) to be
-- written as a heap-only update on the same page instead of a new row version in every index.
ALTER TABLE webhook_deliveries SET (fillfactor = 50);
