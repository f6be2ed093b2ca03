/**
 * The Lua scripts behind the Redis backend (see redis.ts). Each runs atomically on the server:
 * a value and its index entries change together or not at all. Every script's KEYS start with
 * the namespace's index (a sorted set, all scores 0, ordered by member bytes) and its expiry
 * set (a sorted set scored by expiry time, for keys written with a TTL). Data keys follow in
 * KEYS where the script knows them; the listing and prefix scripts reach the keys their index
 * names, which a Redis Cluster would refuse (a single server or a primary/replica pair is what
 * the app supports).
 *
 * Lex ranges: keys under `p` are `[p` up to `(p\255`: no UTF-8 text holds the byte 0xFF, so
 * every key starting with `p` sorts below it.
 */

/** KEYS: index, expiry, key1…keyN. ARGV: now, then raw and ttl ("" = none) per key. */
export const WRITE = `
local idx, exp = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
local members = {}
for i = 3, #KEYS do
  local k = KEYS[i]
  local raw, ms = ARGV[(i - 3) * 2 + 2], ARGV[(i - 3) * 2 + 3]
  if ms == '' then
    redis.call('SET', k, raw)
    redis.call('ZREM', exp, k)
  else
    redis.call('SET', k, raw, 'PX', ms)
    redis.call('ZADD', exp, now + tonumber(ms), k)
  end
  members[#members + 1] = 0
  members[#members + 1] = k
end
redis.call('ZADD', idx, unpack(members))
return #KEYS - 2
`;

/** KEYS: index, expiry, key1…keyN. Returns how many of the keys existed. */
export const DELETE = `
local n = redis.call('UNLINK', unpack(KEYS, 3))
redis.call('ZREM', KEYS[1], unpack(KEYS, 3))
redis.call('ZREM', KEYS[2], unpack(KEYS, 3))
return n
`;

/**
 * KEYS: index, expiry. ARGV: prefix, cursor ("" = from the start), reverse ("1"), count.
 * Reads up to `count` index entries under the prefix after the cursor, returns
 * `{ {key, value, …}, next }` with next = the last entry read when more may follow, else "".
 * An entry whose key is gone (expired natively, or removed behind the store's back) is dropped
 * from the index: a listing costs what it reads, and reads each dead entry once.
 */
export const LIST = `
local idx, exp = KEYS[1], KEYS[2]
local prefix, cursor, rev, want = ARGV[1], ARGV[2], ARGV[3] == '1', tonumber(ARGV[4])
local lo, hi = '[' .. prefix, '(' .. prefix .. '\\255'
if cursor ~= '' then
  if rev then hi = '(' .. cursor else lo = '(' .. cursor end
end
local members
if rev then
  members = redis.call('ZREVRANGEBYLEX', idx, hi, lo, 'LIMIT', 0, want)
else
  members = redis.call('ZRANGEBYLEX', idx, lo, hi, 'LIMIT', 0, want)
end
local out = {}
if #members == 0 then return { out, '' } end
local values = redis.call('MGET', unpack(members))
local dead = {}
for i, m in ipairs(members) do
  local v = values[i]
  if v then
    out[#out + 1] = m
    out[#out + 1] = v
  else
    dead[#dead + 1] = m
  end
end
if #dead > 0 then
  redis.call('ZREM', idx, unpack(dead))
  redis.call('ZREM', exp, unpack(dead))
end
local next = ''
if #members == want then next = members[#members] end
return { out, next }
`;

/** KEYS: index, expiry. ARGV: prefix, count. Deletes up to `count` keys under the prefix. */
export const DELETE_PREFIX = `
local members = redis.call('ZRANGEBYLEX', KEYS[1], '[' .. ARGV[1], '(' .. ARGV[1] .. '\\255', 'LIMIT', 0, tonumber(ARGV[2]))
if #members == 0 then return { 0, 0 } end
local n = redis.call('UNLINK', unpack(members))
redis.call('ZREM', KEYS[1], unpack(members))
redis.call('ZREM', KEYS[2], unpack(members))
return { n, #members }
`;

/** KEYS: index, expiry, key. ARGV: raw, ttl ms, now. SET NX PX, indexed when it wins. */
export const CLAIM = `
if redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('ZADD', KEYS[1], 0, KEYS[3])
  redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[2]), KEYS[3])
  return 1
end
return 0
`;

/**
 * KEYS: index, expiry, key. ARGV: expected raw, raw, ttl ms ("" = none), now. Writes only while
 * the key holds the expected raw (compare-and-set); the key exists, so its index entry does.
 */
export const REPLACE = `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
if ARGV[3] == '' then
  redis.call('SET', KEYS[3], ARGV[2])
  redis.call('ZREM', KEYS[2], KEYS[3])
else
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[3]), KEYS[3])
end
return 1
`;

/**
 * KEYS: index, expiry. ARGV: now, count. Drops from both sets up to `count` keys due by now
 * that Redis has expired; returns `{ dropped, examined }`.
 */
export const SWEEP = `
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local gone = {}
for _, k in ipairs(due) do
  if redis.call('EXISTS', k) == 0 then gone[#gone + 1] = k end
end
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('ZREM', KEYS[2], unpack(gone))
end
return { #gone, #due }
`;

/**
 * KEYS: index, expiry, key1…keyN (found by SCAN when the index is first built). Indexes those
 * that hold a string, with their remaining TTL; returns how many.
 */
export const ADOPT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local n = 0
for i = 3, #KEYS do
  local k = KEYS[i]
  if redis.call('TYPE', k).ok == 'string' then
    redis.call('ZADD', KEYS[1], 0, k)
    local ttl = redis.call('PTTL', k)
    if ttl > 0 then redis.call('ZADD', KEYS[2], ms + ttl, k) end
    n = n + 1
  end
end
return n
`;
