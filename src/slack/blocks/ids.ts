/**
 * Action ids of the buttons on an event card. The card is posted by the live area and its
 * buttons are handled by two areas (organizer: edit, cancel, notify; live: attendance), so the
 * ids live beside the builder rather than in either area.
 */
export const CARD_ACTIONS = {
  edit: "onair_card_edit",
  cancel: "onair_card_cancel",
  notify: "onair_card_notify",
  attendance: "onair_card_attendance",
} as const;
export type CardAction = (typeof CARD_ACTIONS)[keyof typeof CARD_ACTIONS];

/** The overflow menu beside each event in `/onair list` (value: `<card action>|<eventId>`). */
export const LIST_ACTIONS = { overflow: "onair_list_actions" } as const;
