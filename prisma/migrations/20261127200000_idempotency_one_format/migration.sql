-- One idempotency record format (docs/adr/0011-idempotency-record-format.md): a record holds the value its caller
-- stored, and every Surface B action (namespace b:) stores {"value": ..., "outcome"?: ...}.

-- Surface B records of versions before the action seam held a REST response and its status: the action's value (a
-- one-key envelope {"<object>": {"object": "<object>", ...}} unwrapped) and the outcome the status said.
UPDATE "idempotency_record" SET "response_body" = json_build_object(
    'value', COALESCE(CASE WHEN json_typeof("response_body") = 'object' THEN (
      SELECT "response_body" -> e.k FROM json_object_keys("response_body") AS e(k)
      WHERE (SELECT count(*) FROM json_object_keys("response_body")) = 1
        AND json_typeof("response_body" -> e.k) = 'object' AND "response_body" -> e.k ->> 'object' = e.k) END, "response_body"),
    'outcome', CASE "response_status" WHEN 201 THEN 'created' WHEN 202 THEN 'accepted' ELSE 'ok' END)
WHERE "namespace" LIKE 'b:%' AND "response_status" IS NOT NULL AND "response_body" IS NOT NULL;

-- Records of the action seam's transaction kind held the bare value: wrapped, the action's declared outcome applies.
UPDATE "idempotency_record" SET "response_body" = json_build_object('value', "response_body")
WHERE "namespace" LIKE 'b:%' AND "response_status" IS NULL AND "response_body" IS NOT NULL
  AND NOT CASE WHEN json_typeof("response_body") = 'object'
    THEN ("response_body"::jsonb - 'value' - 'outcome') = '{}'::jsonb AND ("response_body"::jsonb -> 'value') IS NOT NULL
    ELSE false END;

-- Other namespaces (Surface A, partner connect, wallet top-ups) stored their value as their response: the status goes.
ALTER TABLE "idempotency_record" DROP COLUMN "response_status";
