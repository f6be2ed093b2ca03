import type { types } from "@slack/bolt";
import type { FlexpaneInfo, UnfurlInfo } from "../domain/unfurl.ts";
import { CARD_ACTIONS } from "../ids.ts";
import { truncate } from "./kit.ts";

type EntityMetadata = types.EntityMetadata;
type EntityCustomField = types.EntityCustomField;

/**
 * A join link as a Work Object (README: "Live unfurls";
 * slack-reference/blocks-and-objects.md): an `slack#/entities/item` whose external_ref is the
 * event id, unfurled with chat.unfurl `metadata.entities` and detailed in the flexpane
 * (entity.presentDetails). Fields are typed values Slack renders itself: a timestamp shows in
 * each reader's own zone, a user as the person. Text fields are plain (no mrkdwn), so outside
 * text goes in cut, not escaped.
 *
 * The unfurl is seen by everyone in the conversation: attendees now only where UnfurlInfo has
 * them (a channel the event notifies). The flexpane is per person: FlexpaneInfo says what they
 * may see.
 */

export const ENTITY_TYPE = "slack#/entities/item";

const TITLE_MAX = 150;

/** The state in plain words (a Work Object shows no mrkdwn or emoji codes). */
export function stateWords(info: UnfurlInfo): string {
  if (info.cancelled) return "Cancelled";
  if (info.endedAt !== undefined) return "Ended";
  const state = info.state ?? info.event.status ?? "NOT_STARTED";
  const words: Record<string, string> = {
    NOT_STARTED: "Not started yet",
    PREP_EVENT: "Getting ready",
    IN_EVENT: "Live now",
  };
  return words[state] ?? `State: ${truncate(state, 40)}`;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

function joinUrl(address: string): string {
  return /^https?:\/\//i.test(address) ? address : `https://${address}`;
}

function commonFields(info: UnfurlInfo): EntityCustomField[] {
  const fields: EntityCustomField[] = [
    { key: "state", label: "State", type: "string", value: stateWords(info) },
    {
      key: "start",
      label: "Starts",
      type: "slack#/types/timestamp",
      value: seconds(info.event.start),
    },
  ];
  if (info.organizer) {
    fields.push({
      key: "organizer",
      label: "Organizer",
      type: "slack#/types/user",
      user: { user_id: info.organizer },
    });
  }
  if (!info.cancelled && info.endedAt !== undefined) {
    fields.push({
      key: "ended",
      label: "Ended",
      type: "slack#/types/timestamp",
      value: seconds(info.endedAt),
    });
    if (info.next !== undefined) {
      fields.push({
        key: "next",
        label: "Next start",
        type: "slack#/types/timestamp",
        value: seconds(info.next),
      });
    }
  }
  if (!info.cancelled && info.present !== undefined) {
    if (info.endedAt !== undefined) {
      fields.push(
        { key: "peak", label: "Peak", type: "integer", value: info.peak ?? 0 },
        { key: "unique", label: "Unique", type: "integer", value: info.unique ?? 0 },
        { key: "present", label: "Present at the end", type: "integer", value: info.present },
      );
    } else {
      fields.push({ key: "present", label: "Attendees now", type: "integer", value: info.present });
    }
  }
  return fields;
}

function entity(info: UnfurlInfo, url: string, fields: EntityCustomField[]): EntityMetadata {
  return {
    app_unfurl_url: url,
    url,
    external_ref: { id: info.event.id, type: "live_event" },
    entity_type: ENTITY_TYPE,
    entity_payload: {
      attributes: {
        title: { text: truncate(info.event.title, TITLE_MAX) || info.event.id },
        display_type: "Live event",
        product_name: "On Air",
      },
      custom_fields: fields,
      display_order: fields.map((f) => f.key),
    },
  };
}

/** The unfurl of a join link, `url` exactly as posted. */
export function workObjectEntity(info: UnfurlInfo, url: string): EntityMetadata {
  return entity(info, url, commonFields(info));
}

/**
 * The flexpane for one person: the unfurl's fields (with the figures only if they may see them),
 * the next occurrences, the join links they may have, and the card's Notify and Attendance
 * buttons (the same action ids and value, so a press goes through the card's own handlers and
 * their checks of who may).
 */
export function flexpaneEntity(info: FlexpaneInfo, url: string): EntityMetadata {
  const fields = commonFields(info);
  if (info.upcoming.length > 0) {
    fields.push({
      key: "upcoming",
      label: info.upcoming.length > 1 ? "Next occurrences" : "Next occurrence",
      type: "array",
      item_type: "slack#/types/timestamp",
      value: info.upcoming.map((s) => ({ type: "slack#/types/timestamp", value: seconds(s) })),
    });
  }
  const link = (key: string, label: string, address: string | undefined) => {
    if (!address) return;
    const href = joinUrl(address);
    fields.push({ key, label, type: "slack#/types/link", value: href, link: href });
  };
  if (!info.cancelled) {
    link("join", "Join link", info.links.attendee);
    link("moderator_link", "Moderator link", info.links.moderator);
    link("panelist_link", "Panelist link", info.links.panelist);
  }
  const out = entity(info, url, fields);
  if (!info.cancelled) {
    out.entity_payload.actions = {
      primary_actions: [
        { text: "Notify this channel", action_id: CARD_ACTIONS.notify, value: info.event.id },
        { text: "Attendance", action_id: CARD_ACTIONS.attendance, value: info.event.id },
      ],
    };
  }
  return out;
}
