import { isObj, LIMITS, MULTI_SELECTS, type Obj, TEXT_INPUTS, TRIGGERS } from "./limits.ts";

/**
 * The checker every block family's checks report into: messages in Slack's format, the
 * composition objects (text, option, confirm) and the interactive elements.
 */

/** The option objects' identity Slack compares: value and text. */
function sameOption(a: unknown, b: unknown): boolean {
  if (!isObj(a) || !isObj(b)) return false;
  const text = (o: Obj) => (isObj(o.text) ? `${String(o.text.type)}:${String(o.text.text)}` : "");
  return a.value === b.value && text(a) === text(b);
}

export class Checker {
  readonly messages: string[] = [];
  /** pointers of elements with focus_on_load: true (a view allows one) */
  readonly focused: string[] = [];

  err(pointer: string, problem: string): void {
    this.messages.push(`[ERROR] ${problem} [json-pointer:${pointer}]`);
  }

  /** A string field with a length cap; `required` reports it missing. */
  str(pointer: string, v: unknown, max: number, required = false): void {
    if (v === undefined) {
      if (required) this.err(pointer, "missing required field");
      return;
    }
    if (typeof v !== "string") {
      this.err(pointer, "expected a string");
      return;
    }
    if (required && v.length === 0) this.err(pointer, "must be more than 0 characters");
    if (v.length > max) this.err(pointer, `must be less than ${max + 1} characters`);
  }

  /** A text object ({type, text}); `plain` refuses mrkdwn where Slack wants plain_text. */
  text(pointer: string, v: unknown, max: number, opts: { plain?: boolean; required?: boolean }) {
    if (v === undefined) {
      if (opts.required) this.err(pointer, "missing required field");
      return;
    }
    if (!isObj(v)) {
      this.err(pointer, "expected an object");
      return;
    }
    if (v.type !== "plain_text" && v.type !== "mrkdwn") {
      this.err(`${pointer}/type`, "must be one of plain_text, mrkdwn");
    } else if (opts.plain && v.type !== "plain_text") {
      this.err(`${pointer}/type`, "must be plain_text");
    }
    if (typeof v.text !== "string") {
      this.err(`${pointer}/text`, "missing required field");
      return;
    }
    if (v.text.length === 0) this.err(`${pointer}/text`, "must be more than 0 characters");
    if (v.text.length > max) this.err(`${pointer}/text`, `must be less than ${max + 1} characters`);
  }

  array(pointer: string, v: unknown, min: number, max: number): unknown[] | undefined {
    if (!Array.isArray(v)) {
      this.err(pointer, "expected an array");
      return undefined;
    }
    if (v.length < min) this.err(pointer, `must provide at least ${min} items`);
    if (v.length > max) this.err(pointer, `no more than ${max} items allowed`);
    return v;
  }

  confirm(pointer: string, v: unknown): void {
    if (v === undefined) return;
    if (!isObj(v)) {
      this.err(pointer, "expected an object");
      return;
    }
    this.text(`${pointer}/title`, v.title, LIMITS.confirmTitle, { plain: true });
    this.text(`${pointer}/text`, v.text, LIMITS.confirmText, { required: true });
    this.text(`${pointer}/confirm`, v.confirm, LIMITS.confirmButton, { plain: true });
    this.text(`${pointer}/deny`, v.deny, LIMITS.confirmButton, { plain: true });
  }

  option(pointer: string, v: unknown, plainOnly: boolean): void {
    if (!isObj(v)) {
      this.err(pointer, "expected an object");
      return;
    }
    this.text(`${pointer}/text`, v.text, LIMITS.optionText, { plain: plainOnly, required: true });
    this.str(`${pointer}/value`, v.value, LIMITS.optionValue, true);
    this.text(`${pointer}/description`, v.description, LIMITS.optionDescription, {
      plain: plainOnly,
    });
    this.str(`${pointer}/url`, v.url, LIMITS.url);
  }

  options(pointer: string, v: unknown, min: number, max: number, plainOnly: boolean): void {
    const list = this.array(pointer, v, min, max);
    for (const [i, o] of (list ?? []).entries()) this.option(`${pointer}/${i}`, o, plainOnly);
  }

  /** initial_option / initial_options must be options of the element (Slack: "exactly match"). */
  initialOptions(pointer: string, el: Obj): void {
    const options = [
      ...(Array.isArray(el.options) ? el.options : []),
      ...(Array.isArray(el.option_groups)
        ? el.option_groups.flatMap((g) => (isObj(g) && Array.isArray(g.options) ? g.options : []))
        : []),
    ];
    const among = (o: unknown) => options.some((x) => sameOption(x, o));
    if (el.initial_option !== undefined && !among(el.initial_option)) {
      this.err(`${pointer}/initial_option`, "must exactly match one of the options");
    }
    if (el.initial_options !== undefined) {
      if (!Array.isArray(el.initial_options)) {
        this.err(`${pointer}/initial_options`, "expected an array");
      } else {
        el.initial_options.forEach((o, i) => {
          if (!among(o)) {
            this.err(`${pointer}/initial_options/${i}`, "must exactly match one of the options");
          }
        });
      }
    }
  }

  /** number_input: numbers as strings, min ≤ max, the initial value between them. */
  numberBounds(pointer: string, el: Obj): void {
    const decimal = el.is_decimal_allowed === true;
    const read = (key: "min_value" | "max_value" | "initial_value"): number | undefined => {
      const v = el[key];
      if (v === undefined) return undefined;
      const text = typeof v === "number" ? String(v) : v;
      const ok = typeof text === "string" && (decimal ? /^-?\d+(\.\d+)?$/ : /^-?\d+$/).test(text);
      if (!ok) {
        this.err(`${pointer}/${key}`, decimal ? "must be a number" : "must be a whole number");
        return undefined;
      }
      return Number(text);
    };
    const min = read("min_value");
    const max = read("max_value");
    const initial = read("initial_value");
    if (min !== undefined && max !== undefined && min > max) {
      this.err(`${pointer}/min_value`, "cannot be greater than max_value");
    }
    if (initial !== undefined && min !== undefined && initial < min) {
      this.err(`${pointer}/initial_value`, "must be greater than or equal to min_value");
    }
    if (initial !== undefined && max !== undefined && initial > max) {
      this.err(`${pointer}/initial_value`, "must be less than or equal to max_value");
    }
  }

  staticOptions(pointer: string, el: Obj): void {
    if (el.options !== undefined && el.option_groups !== undefined) {
      this.err(pointer, "must provide only one of options or option_groups");
    }
    if (el.options !== undefined) {
      this.options(`${pointer}/options`, el.options, 1, LIMITS.selectOptions, true);
    } else if (el.option_groups !== undefined) {
      const groups = this.array(
        `${pointer}/option_groups`,
        el.option_groups,
        1,
        LIMITS.optionGroups,
      );
      groups?.forEach((g, i) => {
        const gp = `${pointer}/option_groups/${i}`;
        if (!isObj(g)) {
          this.err(gp, "expected an object");
          return;
        }
        this.text(`${gp}/label`, g.label, LIMITS.optionText, { plain: true, required: true });
        this.options(`${gp}/options`, g.options, 1, LIMITS.selectOptions, true);
      });
    } else {
      this.err(pointer, "must provide one of options or option_groups");
    }
  }

  element(pointer: string, el: unknown, allowed: ReadonlySet<string>): void {
    if (!isObj(el)) {
      this.err(pointer, "expected an object");
      return;
    }
    const type = el.type;
    if (typeof type !== "string") {
      this.err(`${pointer}/type`, "missing required field");
      return;
    }
    if (!allowed.has(type)) {
      this.err(`${pointer}/type`, `element type ${type} is not allowed here`);
      return;
    }
    if (type !== "image") this.str(`${pointer}/action_id`, el.action_id, LIMITS.actionId);
    this.confirm(`${pointer}/confirm`, el.confirm);
    if (el.focus_on_load === true) this.focused.push(`${pointer}/focus_on_load`);
    if (el.dispatch_action_config !== undefined) {
      const cfg = el.dispatch_action_config;
      const triggers = isObj(cfg) ? cfg.trigger_actions_on : undefined;
      if (!TEXT_INPUTS.has(type)) {
        this.err(`${pointer}/dispatch_action_config`, `not supported by ${type}`);
      } else if (
        !Array.isArray(triggers) ||
        triggers.length === 0 ||
        triggers.some((t) => typeof t !== "string" || !TRIGGERS.has(t))
      ) {
        this.err(
          `${pointer}/dispatch_action_config/trigger_actions_on`,
          "must be a non-empty list of on_enter_pressed, on_character_entered",
        );
      }
    }
    if (
      el.response_url_enabled !== undefined &&
      type !== "conversations_select" &&
      type !== "channels_select"
    ) {
      this.err(`${pointer}/response_url_enabled`, `not supported by ${type}`);
    }
    if (el.placeholder !== undefined) {
      this.text(`${pointer}/placeholder`, el.placeholder, LIMITS.placeholder, { plain: true });
    }
    switch (type) {
      case "button":
        this.text(`${pointer}/text`, el.text, LIMITS.buttonText, { plain: true, required: true });
        this.str(`${pointer}/value`, el.value, LIMITS.buttonValue);
        this.str(`${pointer}/url`, el.url, LIMITS.url);
        this.str(`${pointer}/accessibility_label`, el.accessibility_label, LIMITS.buttonText);
        if (el.style !== undefined && el.style !== "primary" && el.style !== "danger") {
          this.err(`${pointer}/style`, "must be one of primary, danger");
        }
        break;
      case "static_select":
      case "multi_static_select":
        this.staticOptions(pointer, el);
        this.initialOptions(pointer, el);
        break;
      case "overflow":
        // "Maximum number of options is 5, minimum is 2" (overflow menu element reference).
        this.options(`${pointer}/options`, el.options, 2, LIMITS.overflowOptions, true);
        break;
      case "checkboxes":
        this.options(`${pointer}/options`, el.options, 1, LIMITS.checkboxOptions, false);
        this.initialOptions(pointer, el);
        break;
      case "radio_buttons":
        this.options(`${pointer}/options`, el.options, 1, LIMITS.radioOptions, false);
        this.initialOptions(pointer, el);
        break;
      case "datepicker":
        if (el.initial_date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(String(el.initial_date))) {
          this.err(`${pointer}/initial_date`, "must be in the format YYYY-MM-DD");
        }
        break;
      case "timepicker":
        if (el.initial_time !== undefined && !/^\d{2}:\d{2}$/.test(String(el.initial_time))) {
          this.err(`${pointer}/initial_time`, "must be in the format HH:mm");
        }
        break;
      case "datetimepicker":
        if (el.initial_date_time !== undefined && !Number.isInteger(el.initial_date_time)) {
          this.err(`${pointer}/initial_date_time`, "must be a UNIX timestamp in seconds");
        }
        break;
      case "plain_text_input":
        this.lengthBound(`${pointer}/min_length`, el.min_length, 0);
        this.lengthBound(`${pointer}/max_length`, el.max_length, 1);
        this.str(`${pointer}/initial_value`, el.initial_value, LIMITS.plainTextInputLength);
        if (
          typeof el.min_length === "number" &&
          typeof el.max_length === "number" &&
          el.min_length > el.max_length
        ) {
          this.err(`${pointer}/min_length`, "cannot be greater than max_length");
        }
        break;
      case "number_input":
        if (typeof el.is_decimal_allowed !== "boolean") {
          this.err(`${pointer}/is_decimal_allowed`, "missing required field");
        }
        this.numberBounds(pointer, el);
        break;
      case "image":
        if (el.image_url === undefined && el.slack_file === undefined) {
          this.err(pointer, "must provide one of image_url or slack_file");
        }
        this.str(`${pointer}/image_url`, el.image_url, LIMITS.url);
        this.str(`${pointer}/alt_text`, el.alt_text, LIMITS.imageAltText, true);
        break;
      default:
        break;
    }
    if (MULTI_SELECTS.has(type) && el.max_selected_items !== undefined) {
      if (!Number.isInteger(el.max_selected_items) || (el.max_selected_items as number) < 1) {
        this.err(`${pointer}/max_selected_items`, "must be at least 1");
      }
    }
  }

  lengthBound(pointer: string, v: unknown, min: number): void {
    if (v === undefined) return;
    if (
      !Number.isInteger(v) ||
      (v as number) < min ||
      (v as number) > LIMITS.plainTextInputLength
    ) {
      this.err(pointer, `must be between ${min} and ${LIMITS.plainTextInputLength}`);
    }
  }

  uniqueActionIds(pointer: string, elements: readonly unknown[]): void {
    const seen = new Set<string>();
    elements.forEach((el, i) => {
      if (!isObj(el) || typeof el.action_id !== "string") return;
      if (seen.has(el.action_id)) {
        this.err(
          `${pointer}/${i}/action_id`,
          `action_id ${el.action_id} is already used in this block`,
        );
      }
      seen.add(el.action_id);
    });
  }
}
