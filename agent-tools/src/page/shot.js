// agent-tools screenshot helpers. Evaluated as `(<this function>)(op, args)` in the same world
// as page.js, after it: they read the refs page.js issued (its state on window) and never
// issue refs of their own.
async (op, args) => {
  'use strict';
  const S = window.__agentToolsState;
  const OVERLAY = '__agentToolsShotOverlay';
  const COLORS = ['#d7191c', '#2c7bb6', '#1a9641', '#7b3294', '#e66101', '#008080'];
  const MAX_LABELS = 300;
  const refusal = (code, message) => ({ refused: true, code, message, at: location.href });

  function element(ref) {
    const m = /^e(\d+)$/.exec(String(ref == null ? '' : ref).trim());
    if (!m) return refusal('bad_ref', `${JSON.stringify(ref)} is not a ref; refs look like e12 and come from page_read`);
    const n = Number(m[1]);
    const weak = S && S.byRef instanceof Map ? S.byRef.get(n) : undefined;
    const el = weak && weak.deref();
    if (!el) {
      // Numbers below `base` were issued in some document: this one's refs are not among them.
      if (n >= Math.max(S ? S.next : 1, Number(args.base) || 1)) return refusal('unknown_ref', `no element ${ref} was ever listed; use a ref from page_read`);
      return refusal('stale_ref', `${ref} is stale: it is not on the current page (the page navigated or re-rendered since it was read, or it belongs to another tab). Call page_read again.`);
    }
    if (!el.isConnected) return refusal('stale_ref', `${ref} is stale: the element was removed by a re-render or navigation since page_read. Call page_read again.`);
    return el;
  }

  // The element's box in the top document's viewport, through same-origin frames.
  function box(el) {
    const r = el.getBoundingClientRect();
    let x = r.left, y = r.top;
    let win = el.ownerDocument.defaultView;
    while (win && win !== window && win.frameElement) {
      const fe = win.frameElement;
      const fr = fe.getBoundingClientRect();
      x += fr.left + fe.clientLeft;
      y += fr.top + fe.clientTop;
      win = fe.ownerDocument.defaultView;
    }
    return { x, y, width: r.width, height: r.height };
  }

  const shown = (el) => {
    const st = el.ownerDocument.defaultView.getComputedStyle(el);
    return st.visibility === 'visible' && st.display !== 'none' && Number(st.opacity) > 0;
  };

  // A frame or two so the page paints what changed; timers stand in where frames do not run
  // (a tab in the background).
  const painted = () => new Promise((resolve) => {
    const done = setTimeout(resolve, 60);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(done); resolve(); }));
  });

  function removeOverlay() {
    const old = document.getElementById(OVERLAY);
    if (old) old.remove();
  }

  if (op === 'rect') {
    const el = element(args.ref);
    if (el.refused) return el;
    let b = box(el);
    if (b.width < 1 || b.height < 1 || !shown(el)) {
      return refusal('not_visible', `${args.ref} is not visible on the page (hidden or without size): there is nothing to capture`);
    }
    if (b.x < 0 || b.y < 0 || b.x + b.width > innerWidth || b.y + b.height > innerHeight) {
      // Out of view: scrolled to, as a person would before looking at it.
      el.scrollIntoView({ block: 'center', inline: 'center' });
      await painted();
      b = box(el);
    }
    return Object.assign(b, { at: location.href });
  }

  if (op === 'annotate') {
    removeOverlay();
    // In document coordinates, so a full-page capture shows the boxes where their elements are.
    const host = document.createElement('div');
    host.id = OVERLAY;
    host.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;overflow:visible;pointer-events:none;z-index:2147483647;';
    const root = host.attachShadow({ mode: 'closed' });
    const labelled = [];
    const entries = S && S.byRef instanceof Map ? S.byRef : new Map();
    for (const [num, weak] of entries) {
      if (labelled.length >= MAX_LABELS) break;
      const el = weak.deref();
      if (!el || !el.isConnected || !shown(el)) continue;
      const b = box(el);
      if (b.width < 1 || b.height < 1) continue;
      if (!args.full_page && (b.x + b.width < 0 || b.y + b.height < 0 || b.x > innerWidth || b.y > innerHeight)) continue;
      const color = COLORS[labelled.length % COLORS.length];
      const frame = document.createElement('div');
      frame.style.cssText = `position:absolute;box-sizing:border-box;left:${b.x + scrollX}px;top:${b.y + scrollY}px;width:${b.width}px;height:${b.height}px;border:2px solid ${color};`;
      const label = document.createElement('div');
      label.textContent = 'e' + num;
      // Above the box, or inside it at the top of the page.
      const above = b.y + scrollY >= 14;
      label.style.cssText = `position:absolute;left:-2px;top:${above ? -15 : 0}px;background:${color};color:#fff;font:bold 11px/13px monospace;padding:0 3px;white-space:nowrap;`;
      frame.appendChild(label);
      root.appendChild(frame);
      labelled.push('e' + num);
    }
    document.documentElement.appendChild(host);
    await painted();
    return { labelled, at: location.href };
  }

  if (op === 'unannotate') {
    removeOverlay();
    return { at: location.href };
  }

  if (op === 'where') return { at: location.href };
  return refusal('bad_op', 'unknown screenshot operation ' + op);
}
