import type { Checker } from "./checker.ts";
import { checkDataTable, checkDataVisualization } from "./data-blocks.ts";
import {
  ACCESSORY_ELEMENTS,
  ACTIONS_ELEMENTS,
  BLOCK_TYPES,
  INPUT_ELEMENTS,
  isObj,
  LIMITS,
  type Surface,
} from "./limits.ts";

/** The layout blocks: each block's own fields, its elements through the checker. */

export function checkBlock(
  c: Checker,
  pointer: string,
  b: unknown,
  surface: Surface,
  blockIds: Set<string>,
): void {
  if (!isObj(b)) {
    c.err(pointer, "expected an object");
    return;
  }
  const type = b.type;
  if (typeof type !== "string") {
    c.err(`${pointer}/type`, "missing required field");
    return;
  }
  if (!BLOCK_TYPES[surface].has(type)) {
    c.err(`${pointer}/type`, `block type ${type} is not supported in a ${surface}`);
    return;
  }
  if (b.block_id !== undefined) {
    c.str(`${pointer}/block_id`, b.block_id, LIMITS.blockId);
    if (typeof b.block_id === "string") {
      if (blockIds.has(b.block_id)) {
        c.err(`${pointer}/block_id`, `block_id ${b.block_id} is already used`);
      }
      blockIds.add(b.block_id);
    }
  }
  switch (type) {
    case "section": {
      if (b.text === undefined && b.fields === undefined) {
        c.err(pointer, "must provide one of text or fields");
      }
      c.text(`${pointer}/text`, b.text, LIMITS.sectionText, {});
      if (b.fields !== undefined) {
        const fields = c.array(`${pointer}/fields`, b.fields, 1, LIMITS.sectionFields);
        for (const [i, f] of (fields ?? []).entries()) {
          c.text(`${pointer}/fields/${i}`, f, LIMITS.sectionField, { required: true });
        }
      }
      if (b.accessory !== undefined) {
        c.element(`${pointer}/accessory`, b.accessory, ACCESSORY_ELEMENTS);
      }
      break;
    }
    case "header":
      c.text(`${pointer}/text`, b.text, LIMITS.headerText, { plain: true, required: true });
      break;
    case "actions": {
      const els = c.array(`${pointer}/elements`, b.elements, 1, LIMITS.actionsElements);
      if (els) {
        for (const [i, el] of els.entries()) {
          c.element(`${pointer}/elements/${i}`, el, ACTIONS_ELEMENTS);
        }
        c.uniqueActionIds(`${pointer}/elements`, els);
      }
      break;
    }
    case "context": {
      const els = c.array(`${pointer}/elements`, b.elements, 1, LIMITS.contextElements);
      els?.forEach((el, i) => {
        const ep = `${pointer}/elements/${i}`;
        if (isObj(el) && el.type === "image") c.element(ep, el, new Set(["image"]));
        else c.text(ep, el, LIMITS.sectionText, { required: true });
      });
      break;
    }
    case "image":
      if (b.image_url === undefined && b.slack_file === undefined) {
        c.err(pointer, "must provide one of image_url or slack_file");
      }
      c.str(`${pointer}/image_url`, b.image_url, LIMITS.url);
      c.str(`${pointer}/alt_text`, b.alt_text, LIMITS.imageAltText, true);
      c.text(`${pointer}/title`, b.title, LIMITS.imageAltText, { plain: true });
      break;
    case "input":
      c.text(`${pointer}/label`, b.label, LIMITS.inputLabel, { plain: true, required: true });
      c.text(`${pointer}/hint`, b.hint, LIMITS.inputHint, { plain: true });
      if (b.element === undefined) c.err(`${pointer}/element`, "missing required field");
      else c.element(`${pointer}/element`, b.element, INPUT_ELEMENTS);
      if (b.optional !== undefined && typeof b.optional !== "boolean") {
        c.err(`${pointer}/optional`, "expected a boolean");
      }
      if (b.dispatch_action !== undefined && typeof b.dispatch_action !== "boolean") {
        c.err(`${pointer}/dispatch_action`, "expected a boolean");
      }
      // "This field is incompatible with the file_input block element" (input block).
      if (b.dispatch_action === true && isObj(b.element) && b.element.type === "file_input") {
        c.err(`${pointer}/dispatch_action`, "unsupported type: file_input cannot dispatch");
      }
      break;
    case "rich_text":
      c.array(`${pointer}/elements`, b.elements, 0, Number.POSITIVE_INFINITY);
      break;
    case "markdown":
      c.str(`${pointer}/text`, b.text, LIMITS.markdownBlockText, true);
      break;
    case "data_visualization":
      checkDataVisualization(c, pointer, b);
      break;
    case "data_table":
      checkDataTable(c, pointer, b);
      break;
    // Calls API (blocks-and-objects.md): {"type": "call", "call_id": "<id returned by calls.add>"}.
    case "call":
      c.str(`${pointer}/call_id`, b.call_id, LIMITS.blockId, true);
      break;
    default:
      break;
  }
}

export function checkBlocks(c: Checker, pointer: string, blocks: unknown, surface: Surface): void {
  const max = surface === "message" ? LIMITS.blocksPerMessage : LIMITS.blocksPerView;
  const list = c.array(pointer, blocks, 0, max);
  if (!list) return;
  const blockIds = new Set<string>();
  for (const [i, b] of list.entries()) checkBlock(c, `${pointer}/${i}`, b, surface, blockIds);
}
