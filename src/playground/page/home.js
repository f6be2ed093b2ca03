// The app's Home tab.
import { renderBlocks } from "./blocks.js";
import { avatar, viewCtx } from "./context.js";
import { fill, h } from "./dom.js";
import { go } from "./sidebar.js";
import { S } from "./state.js";

export function renderHome(main) {
  const home = S.state.home;
  const key = JSON.stringify([S.me, home]);
  if (S.homeKey === key && main.querySelector(".home")) return;
  S.homeKey = key;
  fill(
    main,
    h(
      "header",
      { class: "chan-head" },
      avatar(S.state.botUserId),
      h("div", { class: "chan-title" }, S.state.appName),
      h(
        "div",
        { class: "tabs" },
        h("span", { class: "tab active" }, "Home"),
        h("button", { class: "tab", onclick: () => go("dm") }, "Messages"),
      ),
    ),
    h(
      "div",
      { class: "home feed", "data-testid": "home" },
      home
        ? renderBlocks(home.blocks, viewCtx(home, "home"))
        : h("div", { class: "empty" }, "Opening the Home tab…"),
    ),
  );
}
