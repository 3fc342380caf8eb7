-- Registered devices: one row per SNS platform endpoint. An audience query selects
-- from here (endpoint_arn and platform are the columns readAudienceQuery requires).
create table devices (
  id bigserial primary key,
  user_id text,
  -- Unique so a re-registered token updates its row instead of adding a second send.
  endpoint_arn text not null unique,
  platform text not null check (platform in ('APNS', 'APNS_SANDBOX', 'GCM')),
  locale text,
  timezone text,
  -- False once SNS reports the endpoint disabled (a dead token); kept for the history.
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  -- Set by whoever updates the row; there is no trigger.
  updated_at timestamptz not null default now()
);

-- "Every device of these users" for user-triggered pushes.
create index devices_user_id_idx on devices (user_id);

-- Audience queries scan enabled devices in id order; disabled rows (often a large
-- share of old tokens) stay out of the index.
create index devices_enabled_id_idx on devices (id) where enabled;
