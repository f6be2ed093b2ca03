/**
 * Block Kit's limits and the element sets each place takes (docs.slack.dev/reference/block-kit),
 * shared by the checks of every block family.
 */

export type Surface = "message" | "modal" | "home";

export interface BlockKitResult {
  readonly ok: boolean;
  readonly messages: readonly string[];
}

export const LIMITS = {
  blocksPerMessage: 50,
  blocksPerView: 100,
  sectionText: 3000,
  sectionField: 2000,
  sectionFields: 10,
  headerText: 150,
  buttonText: 75,
  buttonValue: 2000,
  url: 3000,
  actionId: 255,
  blockId: 255,
  modalTitle: 24,
  modalButton: 24,
  privateMetadata: 3000,
  callbackId: 255,
  externalId: 255,
  messageText: 40_000,
  selectOptions: 100,
  optionGroups: 100,
  optionText: 75,
  optionValue: 150,
  optionDescription: 75,
  placeholder: 150,
  actionsElements: 25,
  contextElements: 10,
  overflowOptions: 5,
  checkboxOptions: 10,
  radioOptions: 10,
  inputLabel: 2000,
  inputHint: 2000,
  plainTextInputLength: 3000,
  imageAltText: 2000,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  markdownBlockText: 12_000,
} as const;

export const SELECTS = new Set([
  "static_select",
  "external_select",
  "users_select",
  "conversations_select",
  "channels_select",
]);
export const MULTI_SELECTS = new Set([...SELECTS].map((s) => `multi_${s}`));

export const ACTIONS_ELEMENTS = new Set([
  "button",
  "checkboxes",
  "datepicker",
  "datetimepicker",
  "overflow",
  "radio_buttons",
  "timepicker",
  "workflow_button",
  "rich_text_input",
  ...SELECTS,
  ...MULTI_SELECTS,
]);
export const ACCESSORY_ELEMENTS = new Set([
  "button",
  "checkboxes",
  "datepicker",
  "image",
  "overflow",
  "radio_buttons",
  "timepicker",
  "workflow_button",
  ...SELECTS,
  ...MULTI_SELECTS,
]);
export const INPUT_ELEMENTS = new Set([
  "checkboxes",
  "datepicker",
  "datetimepicker",
  "email_text_input",
  "file_input",
  "number_input",
  "plain_text_input",
  "radio_buttons",
  "rich_text_input",
  "timepicker",
  "url_text_input",
  ...SELECTS,
  ...MULTI_SELECTS,
]);
export const BLOCK_TYPES: Record<Surface, ReadonlySet<string>> = {
  message: new Set([
    "section",
    "header",
    "divider",
    "image",
    "context",
    "actions",
    "input",
    "rich_text",
    "video",
    "file",
    "markdown",
    "call",
    // Surfaces beyond messages are not documented for these two (blocks-and-objects.md).
    "data_visualization",
    "data_table",
  ]),
  modal: new Set([
    "section",
    "header",
    "divider",
    "image",
    "context",
    "actions",
    "input",
    "rich_text",
    "video",
  ]),
  home: new Set([
    "section",
    "header",
    "divider",
    "image",
    "context",
    "actions",
    "input",
    "rich_text",
    "video",
  ]),
};

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export const TEXT_INPUTS = new Set([
  "plain_text_input",
  "email_text_input",
  "url_text_input",
  "number_input",
]);
export const TRIGGERS = new Set(["on_enter_pressed", "on_character_entered"]);
