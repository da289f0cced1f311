// agent-tools page logic. Evaluated as `(<this function>)(op, args)` in the page's main frame
// by every BrowserHost; returns JSON. State (element refs) lives on a non-enumerable window
// property so refs stay stable across reads of the same document.
async (op, args) => {
  'use strict';
  const W = window;
  const KEY = '__agentToolsState';
  let S = W[KEY];
  if (!S || typeof S !== 'object' || !(S.byRef instanceof Map)) {
    S = { next: 1, byRef: new Map(), byEl: new WeakMap() };
    try {
      Object.defineProperty(W, KEY, { value: S, enumerable: false, configurable: true, writable: false });
    } catch (_) { /* a page that froze window still gets fresh refs per call */ }
  }
  // New refs are always numbered above every ref issued so far in any document, so a ref
  // from an older page version or another tab is never mistaken for one of this page.
  if (typeof args.base === 'number' && args.base > S.next) S.next = args.base;
  // This document's identity, chosen by the first read: a later read compares its elements
  // with the last read's only when both come from the same document.
  if (typeof S.doc !== 'string' && typeof args.doc === 'string') S.doc = args.doc;

  const COMMIT = /\b(submit|commit|place\s+(an\s+)?order|check\s*out|pay|purchase|buy\s+now|send|confirm|delete|publish)\b/i;
  const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'number']);
  const MAX_NAME = 80;

  const clean = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

  function refOf(el) {
    let n = S.byEl.get(el);
    if (n === undefined) {
      n = S.next++;
      S.byEl.set(el, n);
      S.byRef.set(n, new WeakRef(el));
    }
    return 'e' + n;
  }

  // ---- traversal: the document, open shadow roots, same-origin iframes ----
  // `cb(el, offset, tagName, shadowRoot)`: the element's tagName and open shadow root are
  // passed on, read once per element.
  function walk(root, offset, cb) {
    const all = root.querySelectorAll('*');
    for (const el of all) {
      const tn = el.tagName, sr = el.shadowRoot;
      cb(el, offset, tn, sr);
      if (sr) walk(sr, offset, cb);
      if (tn === 'IFRAME' || tn === 'FRAME') {
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (doc && doc.documentElement) {
          const r = el.getBoundingClientRect();
          walk(doc, { x: offset.x + r.left + el.clientLeft, y: offset.y + r.top + el.clientTop }, cb);
        }
      }
    }
  }

  // The walk of a read: `cb(el, at, tagName, shadowRoot)` for every element that can be one of
  // the read's lines or counts (READ_SELECTOR), every other element whose content is editable
  // (an editing host made by a style or a design-mode document) and every shadow host, in the
  // order `walk` visits them. Most elements of a large page are none of those: they cost an
  // identity check, not a tag and an attribute read. `at` holds the frame's offset `x`, `y`
  // and whether the tree has an element with aria-disabled="true" (`ariaDisabled`).
  const READ_SELECTOR = 'a,area,button,select,textarea,summary,input,[role],[contenteditable],' +
    'h1,h2,h3,h4,h5,h6,nav,main,form,dialog,aside,header,footer,img,iframe,frame';

  function readWalk(root, offset, cb) {
    const at = { x: offset.x, y: offset.y, ariaDisabled: root.querySelector('[aria-disabled="true"]') !== null };
    const picked = new Set(root.querySelectorAll(READ_SELECTOR));
    // A document's live collection is quicker to go through than a static list.
    const all = typeof root.getElementsByTagName === 'function' ? root.getElementsByTagName('*') : root.querySelectorAll('*');
    for (let i = 0, n = all.length; i < n; i++) {
      const el = all[i];
      const sr = el.shadowRoot;
      if (picked.has(el)) {
        const tn = el.tagName;
        cb(el, at, tn, sr);
        if (sr) readWalk(sr, offset, cb);
        if (tn === 'IFRAME' || tn === 'FRAME') {
          let doc = null;
          try { doc = el.contentDocument; } catch (_) { doc = null; }
          if (doc && doc.documentElement) {
            const r = el.getBoundingClientRect();
            readWalk(doc, { x: offset.x + r.left + el.clientLeft, y: offset.y + r.top + el.clientTop }, cb);
          }
        }
      } else if (sr || el.isContentEditable) {
        cb(el, at, el.tagName, sr);
        if (sr) readWalk(sr, offset, cb);
      }
    }
  }

  function frameOffset(el) {
    let x = 0, y = 0;
    let win = el.ownerDocument.defaultView;
    while (win && win !== W && win.frameElement) {
      const fe = win.frameElement;
      const r = fe.getBoundingClientRect();
      x += r.left + fe.clientLeft;
      y += r.top + fe.clientTop;
      win = fe.ownerDocument.defaultView;
    }
    return { x, y };
  }

  // ---- roles, names, states ----
  function tag(el) { return el.tagName.toLowerCase(); }

  // (Here and below, `t` is the element's tag when the caller has it.)
  function roleOf(el, t = tag(el)) {
    const roleAttr = el.getAttribute('role');
    const explicit = roleAttr === null ? '' : clean(roleAttr).split(' ')[0];
    if (explicit) return explicit;
    if (t === 'a' || t === 'area') return el.hasAttribute('href') ? 'link' : 'generic';
    if (t === 'button') return 'button';
    if (t === 'summary') return 'button';
    if (t === 'textarea') return 'textbox';
    if (t === 'select') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    if (t === 'input') {
      const ty = (el.getAttribute('type') || 'text').toLowerCase();
      if (ty === 'checkbox') return 'checkbox';
      if (ty === 'radio') return 'radio';
      if (['submit', 'button', 'reset', 'image'].includes(ty)) return 'button';
      if (ty === 'range') return 'slider';
      if (ty === 'number') return 'spinbutton';
      if (ty === 'search') return 'searchbox';
      if (ty === 'password') return 'password';
      if (ty === 'file') return 'file';
      if (['date', 'time', 'datetime-local', 'month', 'week', 'color'].includes(ty)) return ty;
      return 'textbox';
    }
    if (el.isContentEditable) return 'textbox';
    if (/^h[1-6]$/.test(t)) return 'heading';
    return 'generic';
  }

  const WIDGET_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'switch', 'option', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem',
    'listbox']);

  // `t` and `roleAttr` (the element's tag and role attribute) when the caller has them.
  function isInteractive(el, t = tag(el), roleAttr = el.getAttribute('role')) {
    if (t === 'a' || t === 'area') return el.hasAttribute('href');
    if (t === 'button' || t === 'select' || t === 'textarea' || t === 'summary') return true;
    if (t === 'input') return (el.getAttribute('type') || '').toLowerCase() !== 'hidden';
    if (el.isContentEditable && (el.parentElement == null || !el.parentElement.isContentEditable)) return true;
    if (roleAttr === null) return false;
    const role = clean(roleAttr).split(' ')[0];
    return !!role && WIDGET_ROLES.has(role);
  }

  const HEADING_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
  const LANDMARK_TAGS = new Set(['nav', 'main', 'form', 'dialog', 'aside', 'header', 'footer']);
  const LANDMARK_ROLES = new Set(['navigation', 'main', 'form', 'dialog', 'search', 'banner', 'contentinfo', 'complementary']);
  const FIELD_TAGS = new Set(['input', 'select', 'textarea']);

  function textOf(el) {
    // innerText for rendered text; textContent inside closed/hidden subtrees. innerText lays
    // the text out on every get: read it once.
    const inner = el.innerText;
    return clean(inner !== undefined && inner !== '' ? inner : el.textContent);
  }

  // A label's own text, without the text of the controls inside it (a select's options).
  function labelText(label) {
    let out = '';
    const visit = (node) => {
      for (const c of node.childNodes) {
        if (c.nodeType === 3) out += c.nodeValue + ' ';
        else if (c.nodeType === 1 && !['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'SCRIPT', 'STYLE'].includes(c.tagName)) visit(c);
      }
    };
    visit(label);
    return clean(out);
  }

  function byIds(el, attr) {
    const list = el.getAttribute(attr);
    if (list === null) return '';
    const ids = clean(list).split(' ').filter(Boolean);
    if (!ids.length) return '';
    const root = el.getRootNode();
    return clean(ids.map((id) => {
      const n = root.getElementById ? root.getElementById(id) : el.ownerDocument.getElementById(id);
      return n ? textOf(n) : '';
    }).join(' '));
  }

  function nameOf(el, t = tag(el)) {
    const label = el.getAttribute('aria-label');
    let n = byIds(el, 'aria-labelledby') || (label === null ? '' : clean(label));
    if (!n && el.labels && el.labels.length) n = clean(Array.from(el.labels).map(labelText).join(' '));
    if (!n && t === 'input') {
      const ty = (el.getAttribute('type') || '').toLowerCase();
      if (['submit', 'button', 'reset'].includes(ty)) n = clean(el.value || (ty === 'submit' ? 'Submit' : ty));
      if (ty === 'image') n = clean(el.alt);
    }
    if (!n && !FIELD_TAGS.has(t)) n = textOf(el);
    if (!n) {
      const img = el.querySelector && el.querySelector('img[alt]');
      if (img) n = clean(img.alt);
    }
    if (!n) n = clean(el.getAttribute('title')) || clean(el.getAttribute('placeholder'));
    return cut(n, MAX_NAME);
  }

  // The elements :disabled can match: form controls and form-associated custom elements.
  const DISABLABLE = new Set(['button', 'input', 'select', 'textarea', 'optgroup', 'option', 'fieldset']);

  function isDisabled(el, t = tag(el), ariaDisabled = true) {
    if (DISABLABLE.has(t) || t.includes('-')) {
      try { if (el.matches(':disabled')) return true; } catch (_) { /* not a form control */ }
    }
    return ariaDisabled && (el.getAttribute('aria-disabled') === 'true' || !!el.closest('[aria-disabled="true"]'));
  }

  function isPassword(el, t = tag(el)) {
    return t === 'input' && (el.getAttribute('type') || '').toLowerCase() === 'password';
  }

  function submitsForm(el, t = tag(el)) {
    if (t === 'button') return (el.type || 'submit') === 'submit' && !!el.form;
    if (t === 'input') {
      const ty = (el.getAttribute('type') || '').toLowerCase();
      return (ty === 'submit' || ty === 'image') && !!el.form;
    }
    return false;
  }

  function isReadOnly(el) {
    if (el.readOnly) return true;
    return el.getAttribute('aria-readonly') === 'true';
  }

  function statesOf(el, t = tag(el), ariaDisabled = true) {
    const s = [];
    if (isDisabled(el, t, ariaDisabled)) s.push('disabled');
    // The type matters for inputs and text areas only.
    const ty = t === 'input' || t === 'textarea' ? (el.getAttribute('type') || '').toLowerCase() : '';
    if ((t === 'input' && (ty === 'checkbox' || ty === 'radio')) ? el.checked : el.getAttribute('aria-checked') === 'true') s.push('checked');
    const exp = el.getAttribute('aria-expanded');
    if (exp === 'true') s.push('expanded');
    else if (exp === 'false') s.push('collapsed');
    if (t === 'summary' && el.parentElement && tag(el.parentElement) === 'details') s.push(el.parentElement.open ? 'expanded' : 'collapsed');
    if (el.required || el.getAttribute('aria-required') === 'true') s.push('required');
    if (['input', 'textarea'].includes(t) && isReadOnly(el) && !['checkbox', 'radio', 'submit', 'button', 'reset', 'image'].includes(ty)) s.push('readonly');
    if (el.getAttribute('aria-selected') === 'true') s.push('selected');
    if (submitsForm(el, t)) s.push('submits-form');
    if ((t === 'input' || t === 'textarea') && el.maxLength > 0) s.push('maxlength=' + el.maxLength);
    return s;
  }

  function valueOf(el, t = tag(el)) {
    if (isPassword(el, t)) return { hidden: true };
    if (t === 'select') {
      const o = Array.from(el.selectedOptions || []).map((x) => clean(x.label || x.text));
      return { v: cut(o.join(', '), MAX_NAME) };
    }
    if (t === 'textarea') return { v: cut(String(el.value), MAX_NAME) };
    if (t === 'input') {
      const ty = (el.getAttribute('type') || 'text').toLowerCase();
      if (['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file'].includes(ty)) return null;
      return { v: cut(String(el.value), MAX_NAME) };
    }
    if (el.isContentEditable) return { v: cut(textOf(el), MAX_NAME) };
    return null;
  }

  // A link to a fragment of its own document (most of a documentation page's links) resolves
  // to the document's address without its fragment and the fragment as written, when the
  // document has no other base URL and the fragment has nothing the URL parser would encode.
  const SAME_DOC = /^#[\x21\x23-\x3b\x3d\x3f-\x5f\x61-\x7e]*$/;
  const docPrefixes = new Map();

  function docPrefix(doc) {
    let p = docPrefixes.get(doc);
    if (p === undefined) {
      const u = doc.URL;
      p = typeof u === 'string' && doc.baseURI === u ? u.split('#')[0] : null;
      docPrefixes.set(doc, p);
    }
    return p;
  }

  function hrefOf(el, t = tag(el)) {
    const raw = el.getAttribute('href');
    if (raw === null) return null;
    if (raw.charCodeAt(0) === 35 && SAME_DOC.test(raw)) {
      const p = docPrefix(el.ownerDocument);
      if (p !== null) return p + raw;
    }
    // A link's own href property is the attribute parsed against the document's base URL, or
    // the attribute as written when it does not parse: what new URL(...) gives, without
    // building a URL object, as long as the document is UTF-8 (the property encodes a query in
    // the document's encoding).
    if (t === 'a' || t === 'area') {
      const href = el.href;
      if (typeof href === 'string' && el.ownerDocument.characterSet === 'UTF-8') return href;
    }
    try { return new URL(raw, el.baseURI).href; } catch (_) { return raw; }
  }

  const VISIBILITY = { checkOpacity: true, checkVisibilityCSS: true };

  function visible(el) {
    if (typeof el.checkVisibility === 'function') {
      if (!el.checkVisibility(VISIBILITY)) return false;
    } else {
      const cs = el.ownerDocument.defaultView.getComputedStyle(el);
      if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0') return false;
    }
    return true;
  }

  function rectOf(el) {
    const r = el.getBoundingClientRect();
    const o = frameOffset(el);
    return { x: r.left + o.x, y: r.top + o.y, w: r.width, h: r.height };
  }

  // `ariaDisabled` false: the element's tree has no element with aria-disabled="true" (a read
  // knows), so no ancestor needs looking at.
  function describe(el, ariaDisabled = true) {
    const t = tag(el);
    const v = valueOf(el, t);
    const out = { ref: refOf(el), role: roleOf(el, t), name: nameOf(el, t) };
    if (v && v.hidden) out.valueHidden = true; else if (v) out.value = v.v;
    const st = statesOf(el, t, ariaDisabled);
    if (st.length) out.states = st;
    if (out.role === 'link') out.href = hrefOf(el, t);
    return out;
  }

  // ---- page facts and the element list ----
  function read() {
    const vw = W.innerWidth, vh = W.innerHeight;
    const items = [];
    const beyond = [];
    const counts = { links: 0, images: 0, headings: 0, forms: 0, fields: 0, iframes: 0, shadowRoots: 0, hiddenInteractive: 0 };
    let total = 0;
    // Context lines (headings, landmarks) stop at LIMIT items in all; interactive elements
    // have a budget of their own, so a page's headings cannot make its controls unreachable.
    const LIMIT = args.maxItems || 3000;
    const ELEMENT_LIMIT = args.maxElements || 5000;
    let elementsListed = 0;
    // Runs for the elements readWalk picks (4 700 of the 16 000 on a large documentation
    // page).
    readWalk(document, { x: 0, y: 0 }, (el, at, tn, sr) => {
      const t = tn.toLowerCase();
      if (sr) counts.shadowRoots++;
      if (t === 'a') { if (el.hasAttribute('href')) counts.links++; }
      else if (t === 'img') counts.images++;
      else if (t === 'iframe') counts.iframes++;
      else if (t === 'form') counts.forms++;
      const roleAttr = el.getAttribute('role');
      const heading = HEADING_TAGS.has(t) || roleAttr === 'heading';
      if (heading) counts.headings++;
      const inter = isInteractive(el, t, roleAttr);
      if (inter && FIELD_TAGS.has(t)) counts.fields++;
      const landmark = LANDMARK_TAGS.has(t) || LANDMARK_ROLES.has(roleAttr || '');
      if (!inter && !heading && !landmark) return;
      // Visibility first: most hidden elements are hidden by a style, and the box costs more.
      const r = visible(el) ? el.getBoundingClientRect() : null;
      if (r === null || r.width === 0 || r.height === 0) {
        if (inter) counts.hiddenInteractive++;
        return;
      }
      if (inter ? elementsListed >= ELEMENT_LIMIT : items.length >= LIMIT) {
        total++;
        // Listed before, past the limit now: still on the page, so not reported as removed.
        const n = inter ? S.byEl.get(el) : undefined;
        if (n !== undefined && beyond.length < 5000) beyond.push('e' + n);
        return;
      }
      total++;
      // The frame's offset, the same for every element of one tree.
      const o = at.frame || (at.frame = frameOffset(el));
      const y = r.top + o.y, x = r.left + o.x;
      const inView = y < vh && y + r.height > 0 && x < vw && x + r.width > 0;
      if (inter) {
        elementsListed++;
        const d = describe(el, at.ariaDisabled);
        d.k = 'e';
        if (inView) d.inView = true;
        items.push(d);
      } else if (heading) {
        const text = cut(textOf(el), MAX_NAME);
        const level = HEADING_TAGS.has(t) ? Number(t[1]) : 2;
        if (text) items.push(inView ? { k: 'h', level, name: text, inView } : { k: 'h', level, name: text });
      } else {
        const role = roleAttr || ({ nav: 'navigation', aside: 'complementary', header: 'banner', footer: 'contentinfo' }[t] || t);
        const line = { k: 'l', role, name: cut(clean(el.getAttribute('aria-label')) || byIds(el, 'aria-labelledby'), 40) };
        if (inView) line.inView = true;
        items.push(line);
      }
    });
    const body = document.body;
    const fullText = body ? clean(body.innerText) : '';
    const out = {
      doc: typeof S.doc === 'string' ? S.doc : '',
      url: location.href,
      title: document.title,
      readyState: document.readyState,
      counts: Object.assign(counts, { chars: fullText.length }),
      textPreview: fullText.slice(0, 4000),
      items,
      omittedItems: Math.max(0, total - items.length),
      beyondLimit: beyond,
      scroll: { y: Math.round(W.scrollY), height: Math.round(document.documentElement.scrollHeight), viewport: vh },
    };
    if (args.compact === true) {
      const origin = location.origin;
      out.pagePrefix = location.href.split('#')[0];
      out.sitePrefix = typeof origin === 'string' && origin !== 'null' && origin !== '' ? origin : null;
      out.items = compactItems(items, out.pagePrefix, out.sitePrefix);
      out.compact = 1;
    }
    return out;
  }

  // A read for the tools (`compact`) carries its items as arrays, and its link addresses
  // without the page's own address or origin in front: half the characters to carry out of
  // the page. The tools expand them back (tools/compact.rs):
  // - an element: [flags, ref number, role, name, then value if flags & 4, states if
  //   flags & 8, href if flags & 16], flags & 1 in the viewport, flags & 2 value hidden;
  // - a heading: ['h', in the viewport (0/1), level, name]; a landmark: ['l', 0/1, role, name];
  // - an address starting with `#` follows the page's address without its fragment
  //   (`pagePrefix`), one starting with `/` its origin (`sitePrefix`); one starting with `!`
  //   is the rest as it is.
  function compactItems(items, page, site) {
    const address = (h) => {
      if (typeof h !== 'string') return h;
      if (h.length > page.length && h.startsWith(page) && h.charCodeAt(page.length) === 35) return h.slice(page.length);
      if (site !== null && h.length > site.length && h.startsWith(site) && h.charCodeAt(site.length) === 47) return h.slice(site.length);
      const c = h.charCodeAt(0);
      return c === 35 || c === 47 || c === 33 ? '!' + h : h;
    };
    return items.map((it) => {
      if (it.k === 'h') return ['h', it.inView ? 1 : 0, it.level, it.name];
      if (it.k === 'l') return ['l', it.inView ? 1 : 0, it.role, it.name];
      const hasValue = 'value' in it, hasStates = 'states' in it, hasHref = 'href' in it;
      const flags = (it.inView ? 1 : 0) | (it.valueHidden ? 2 : 0) | (hasValue ? 4 : 0) | (hasStates ? 8 : 0) | (hasHref ? 16 : 0);
      const out = [flags, Number(it.ref.slice(1)), it.role, it.name];
      if (hasValue) out.push(it.value);
      if (hasStates) out.push(it.states);
      if (hasHref) out.push(address(it.href));
      return out;
    });
  }

  // ---- targets: a ref or a selector (with >>> hops into shadow roots and iframes) ----
  function refusal(code, message, extra) {
    return Object.assign({ refused: true, code, message }, extra || {});
  }

  function queryDeep(scopes, selector) {
    const hops = selector.split('>>>').map((s) => s.trim());
    if (hops.some((h) => !h)) throw refusal('bad_selector', `selector ${JSON.stringify(selector)} has an empty part around ">>>"`);
    let current = scopes;
    for (let i = 0; i < hops.length; i++) {
      const found = [];
      for (const scope of current) {
        let list;
        try { list = scope.querySelectorAll(hops[i]); } catch (e) {
          throw refusal('bad_selector', `selector ${JSON.stringify(hops[i])} does not compile: ${clean(e && e.message)}`);
        }
        for (const el of list) if (!found.includes(el)) found.push(el);
      }
      if (i === hops.length - 1) return found;
      current = [];
      for (const el of found) {
        if (el.shadowRoot) current.push(el.shadowRoot);
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (doc) current.push(doc);
      }
    }
    return [];
  }

  function candidates(list) {
    return list.slice(0, 5).map((el) => describe(el));
  }

  function resolveTarget(t) {
    const ref = clean(t.ref), sel = t.selector == null ? '' : String(t.selector);
    if (ref && sel.trim()) throw refusal('bad_target', 'give either a ref or a selector, not both');
    if (ref) {
      const m = /^e(\d+)$/.exec(ref);
      if (!m) throw refusal('bad_ref', `${JSON.stringify(ref)} is not a ref; refs look like e12 and come from page_read`);
      const n = Number(m[1]);
      const weak = S.byRef.get(n);
      const el = weak && weak.deref();
      if (!el) {
        if (n >= S.next) throw refusal('unknown_ref', `no element ${ref} was ever listed; use a ref from page_read`);
        throw refusal('stale_ref', `${ref} is stale: it is not on the current page (the page navigated or re-rendered since it was read, or it belongs to another tab). Call page_read again.`);
      }
      if (!el.isConnected) {
        throw refusal('stale_ref', `${ref} is stale: the element was removed by a re-render or navigation since page_read. Call page_read again.`);
      }
      return el;
    }
    if (!sel.trim()) throw refusal('empty_selector', 'the selector is empty; give a ref from page_read or a CSS selector');
    const found = selectorMatches(t, sel);
    if (found.length === 0) {
      // Help: the same selector inside shadow roots or frames.
      const deep = [];
      walk(document, { x: 0, y: 0 }, (el) => {
        if (deep.length < 5 && el.matches && (() => { try { return el.matches(sel); } catch (_) { return false; } })()) deep.push(el);
      });
      const hint = deep.length ? ' (it matches inside a shadow root or frame: use the refs below, or cross with ">>>")' : '';
      throw refusal('no_match', `no element matches ${JSON.stringify(sel)}${hint}`, deep.length ? { candidates: candidates(deep) } : {});
    }
    if (found.length > 1) {
      throw refusal('ambiguous', `${JSON.stringify(sel)} matches ${found.length} elements; it must match exactly one. Use one of these refs or a more specific selector`, { candidates: candidates(found) });
    }
    return found[0];
  }

  // Every element a selector matches, in the `within` container when there is one.
  function selectorMatches(t, sel) {
    let scopes = [document];
    if (t.within != null && String(t.within).trim()) {
      const boxes = queryDeep([document], String(t.within));
      if (boxes.length === 0) throw refusal('within_missing', `the within container ${JSON.stringify(t.within)} matches nothing`);
      if (boxes.length > 1) throw refusal('within_ambiguous', `the within container ${JSON.stringify(t.within)} matches ${boxes.length} elements`, { candidates: candidates(boxes) });
      scopes = [boxes[0].shadowRoot || boxes[0]];
      if (boxes[0].shadowRoot) scopes.push(boxes[0]);
    }
    return queryDeep(scopes, sel);
  }

  // ---- inspection shared by click, fill and select ----
  function deepHit(doc, x, y) {
    let hit = doc.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  function composedContains(outer, node) {
    for (let n = node; n; n = n.parentNode || n.host) {
      if (n === outer) return true;
    }
    return false;
  }

  function coveredBy(el) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const r = el.getBoundingClientRect();
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    const hit = deepHit(el.ownerDocument, cx, cy);
    const labelFor = hit && tag(hit) === 'label' && hit.control === el;
    if (!hit || (!composedContains(el, hit) && !labelFor)) return hit || el.ownerDocument.documentElement;
    // Inside an iframe: the frame itself must not be covered in its parent.
    const win = el.ownerDocument.defaultView;
    if (win && win !== W && win.frameElement) {
      const fe = win.frameElement;
      const fr = fe.getBoundingClientRect();
      const px = fr.left + fe.clientLeft + cx, py = fr.top + fe.clientTop + cy;
      const phit = deepHit(fe.ownerDocument, px, py);
      if (phit !== fe) return phit || fe.ownerDocument.documentElement;
    }
    return null;
  }

  function short(el) {
    const id = el.id ? '#' + el.id : '';
    const cls = typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    const text = cut(textOf(el), 40);
    return `<${tag(el)}${id}${cls}>${text ? ' "' + text + '"' : ''}`;
  }

  function inspectVisible(el, what) {
    const d = describe(el);
    if (!visible(el)) throw refusal('hidden', `${d.ref} (${d.role} "${d.name}") is hidden; a person could not ${what} it`, { target: d });
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) throw refusal('zero_size', `${d.ref} (${d.role} "${d.name}") has no size on screen; a person could not ${what} it`, { target: d });
    return d;
  }

  function inspectCovered(el, d, what) {
    const cover = coveredBy(el);
    if (cover) throw refusal('covered', `${d.ref} (${d.role} "${d.name}") is covered by ${short(cover)} at its centre; a person could not ${what} it`, { target: d });
  }

  // ---- the snapshot a click is judged by ----
  function snapshot() {
    const fields = [];
    const expanded = [];
    let visibleFields = 0;
    walk(document, { x: 0, y: 0 }, (el) => {
      const t = tag(el);
      if (t === 'input' || t === 'textarea' || t === 'select') {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && visible(el)) visibleFields++;
        fields.push(t === 'input' && ['checkbox', 'radio'].includes(el.type) ? String(el.checked) : String(el.value));
      }
      const ae = el.getAttribute('aria-expanded');
      if (ae !== null) expanded.push(ae);
      if (t === 'details') expanded.push(String(el.open));
      if (t === 'dialog') expanded.push(String(el.open));
    });
    // Text of the document, open shadow roots and same-origin frames, hashed (FNV-1a), so
    // that a same-length change ("0" -> "1") counts.
    const bodyText = document.body ? document.body.innerText : '';
    let text = bodyText;
    walk(document, { x: 0, y: 0 }, (el) => {
      if (el.shadowRoot) text += '\u0002' + el.shadowRoot.textContent;
      if (el.tagName === 'IFRAME') {
        try { if (el.contentDocument && el.contentDocument.body) text += '\u0003' + el.contentDocument.body.innerText; } catch (_) { /* cross-origin */ }
      }
    });
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
    return {
      url: location.href,
      title: document.title,
      textHash: h,
      visibleFields,
      fields: fields.join('\u0001'),
      expanded: expanded.join(','),
      textLength: bodyText.length,
      elements: document.getElementsByTagName('*').length,
    };
  }

  // ---- the operations ----
  function doText() {
    const el = resolveTarget(args);
    const r = el.getBoundingClientRect();
    // innerText lays the text out on every get: read it once.
    const inner = el.innerText;
    return { target: describe(el), text: String(inner !== undefined ? inner : el.textContent), visible: visible(el) && r.width > 0 && r.height > 0 };
  }

  // What makes activating an element a commitment: its name, text, label, value or title.
  function commitWord(el, d) {
    return COMMIT.exec(clean([d.name, textOf(el), el.getAttribute('aria-label'), el.value && typeof el.value === 'string' ? el.value : '', el.getAttribute('title')].join(' ')));
  }

  // Whether keys typed into the element are text, not an activation.
  function takesText(el) {
    const t = tag(el);
    if (t === 'textarea' || t === 'select' || el.isContentEditable) return true;
    const ty = (el.getAttribute('type') || 'text').toLowerCase();
    return t === 'input' && !['button', 'reset', 'submit', 'image', 'checkbox', 'radio', 'file', 'color', 'range'].includes(ty);
  }

  function doClick() {
    const el = resolveTarget(args);
    const d = describe(el);
    if (isPassword(el)) throw refusal('password', `${d.ref} is a password field; the model does not click or fill passwords`, { target: d });
    if (isDisabled(el)) throw refusal('disabled', `${d.ref} (${d.role} "${d.name}") is disabled`, { target: d });
    inspectVisible(el, 'click');
    const m = commitWord(el, d);
    if (m) throw refusal('commit_action', `${d.ref} (${d.role} "${d.name}") reads like a commit action ("${m[0]}"); committing is left to the person`, { target: d });
    if (submitsForm(el)) throw refusal('submits_form', `${d.ref} (${d.role} "${d.name}") would submit its form; submitting is left to the person`, { target: d });
    inspectCovered(el, d, 'click');
    const before = snapshot();
    el.click();
    return { target: d, before };
  }

  async function settleBriefly() {
    await new Promise((res) => setTimeout(res, 30));
    // A background tab paints no frames, so its animation-frame callbacks never run.
    if (document.visibilityState === 'visible') await new Promise((res) => requestAnimationFrame(() => res()));
  }

  async function doFill() {
    const text = args.text == null ? '' : String(args.text);
    const el = resolveTarget(args);
    const d = describe(el);
    if (text === '') throw refusal('empty_text', 'the text to fill is empty; page_fill does not clear fields', { target: d });
    if (/[\u2013\u2014]/.test(text)) throw refusal('dash', 'the text contains an em dash or en dash; write it with plain hyphens', { target: d });
    if (isPassword(el)) throw refusal('password', `${d.ref} is a password field; passwords are left to the person`, { target: d });
    const t = tag(el);
    const ty = (el.getAttribute('type') || '').toLowerCase();
    const textInput = (t === 'input' && TEXT_TYPES.has(ty)) || t === 'textarea' || (el.isContentEditable && t !== 'input');
    if (!textInput) throw refusal('not_text_input', `${d.ref} (${d.role} "${d.name}") is not a text field; use page_click or page_select for it`, { target: d });
    if (isDisabled(el)) throw refusal('disabled', `${d.ref} (${d.role} "${d.name}") is disabled; a person could not type in it`, { target: d });
    if ((t === 'input' || t === 'textarea') && isReadOnly(el)) throw refusal('read_only', `${d.ref} (${d.role} "${d.name}") is read-only; a person could not type in it`, { target: d });
    if (el.isContentEditable === false && el.getAttribute('aria-readonly') === 'true') throw refusal('read_only', `${d.ref} is read-only`, { target: d });
    if ((t === 'input' || t === 'textarea') && el.maxLength > 0 && text.length > el.maxLength) {
      throw refusal('too_long', `the text is ${text.length} characters but ${d.ref} accepts at most ${el.maxLength}; shorten it rather than let the page cut it`, { target: d });
    }
    inspectVisible(el, 'type in');
    inspectCovered(el, d, 'type in');
    el.focus();
    if (t === 'input' || t === 'textarea') {
      const proto = t === 'input' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
      const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
      setter.call(el, text);
    } else {
      el.textContent = text;
    }
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true, composed: true }));
    el.blur();
    await settleBriefly();
    const actual = t === 'input' || t === 'textarea' ? String(el.value) : textOf(el);
    return { target: describe(el), expected: text, actual, ok: actual === text };
  }

  async function doSelect() {
    const value = args.value == null ? '' : String(args.value);
    const el = resolveTarget(args);
    const d = describe(el);
    if (!value.trim()) throw refusal('empty_value', 'the value to select is empty', { target: d });
    if (tag(el) !== 'select') throw refusal('not_select', `${d.ref} (${d.role} "${d.name}") is not a <select>; use page_click or page_fill for it`, { target: d });
    if (isDisabled(el)) throw refusal('disabled', `${d.ref} (${d.role} "${d.name}") is disabled`, { target: d });
    inspectVisible(el, 'choose in');
    inspectCovered(el, d, 'choose in');
    const opts = Array.from(el.options);
    const want = value.trim().toLowerCase();
    let opt = opts.find((o) => o.value.toLowerCase() === want) || opts.find((o) => clean(o.label || o.text).toLowerCase() === want);
    if (!opt) {
      const list = opts.slice(0, 30).map((o) => `${JSON.stringify(clean(o.label || o.text))} (value ${JSON.stringify(o.value)})`);
      throw refusal('no_option', `no option of ${d.ref} matches ${JSON.stringify(value)}; options: ${list.join(', ')}${opts.length > 30 ? `, and ${opts.length - 30} more` : ''}`, { target: d });
    }
    if (opt.disabled) throw refusal('option_disabled', `the option ${JSON.stringify(clean(opt.label || opt.text))} is disabled`, { target: d });
    el.focus();
    opt.selected = true;
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true, composed: true }));
    el.blur();
    await settleBriefly();
    const chosen = el.selectedOptions[0];
    const actual = chosen ? clean(chosen.label || chosen.text) : '';
    const expected = clean(opt.label || opt.text);
    return { target: describe(el), expected, actual, ok: !!chosen && chosen === opt };
  }

  // ---- scrolling: where the viewport is, and what came into view ----
  const TEXT_BLOCKS = new Set(['p', 'li', 'blockquote', 'pre', 'td', 'th', 'dd', 'dt', 'figcaption']);

  function inViewport(el, off) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    const y = r.top + off.y, x = r.left + off.x;
    return y < W.innerHeight && y + r.height > 0 && x < W.innerWidth && x + r.width > 0;
  }

  // The elements, headings and text blocks now in the viewport, in document order.
  function viewItems() {
    const out = [];
    walk(document, { x: 0, y: 0 }, (el, off) => {
      const t = tag(el);
      const inter = isInteractive(el);
      const heading = /^h[1-6]$/.test(t) || el.getAttribute('role') === 'heading';
      if (!inter && !heading && !TEXT_BLOCKS.has(t)) return;
      if (!inViewport(el, off) || !visible(el)) return;
      out.push({ el, k: inter ? 'e' : heading ? 'h' : 't' });
    });
    return out;
  }

  // The element a direction scroll moves: the window, or (when the window cannot scroll) the
  // largest visible scroll area of the document.
  function scrollArea() {
    const se = document.scrollingElement || document.documentElement;
    if (se.scrollHeight > W.innerHeight + 2) return null;
    let best = null, area = 0;
    for (const el of document.querySelectorAll('*')) {
      if (el.scrollHeight <= el.clientHeight + 2) continue;
      if (!/(auto|scroll|overlay)/.test(W.getComputedStyle(el).overflowY)) continue;
      const r = el.getBoundingClientRect();
      if (r.width * r.height > area && visible(el)) { best = el; area = r.width * r.height; }
    }
    return best;
  }

  function scrollState(box) {
    const se = document.scrollingElement || document.documentElement;
    const y = Math.round(box ? box.scrollTop : W.scrollY);
    const height = Math.round(box ? box.scrollHeight : se.scrollHeight);
    const viewport = Math.round(box ? box.clientHeight : W.innerHeight);
    return { y, height, viewport, atTop: y <= 1, atBottom: y + viewport >= height - 2, area: box ? short(box) : null };
  }

  // The first visible element whose own text contains `want` (case-insensitive), and how many
  // visible elements contain it.
  function findText(want) {
    const w = want.toLowerCase();
    let first = null, count = 0, hidden = 0;
    walk(document, { x: 0, y: 0 }, (el) => {
      if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'TITLE'].includes(el.tagName)) return;
      let own = '';
      for (const c of el.childNodes) if (c.nodeType === 3) own += c.nodeValue;
      let hit = clean(own).toLowerCase().includes(w);
      // A value shown in a field counts as its text.
      if (!hit && ['input', 'textarea'].includes(tag(el)) && !isPassword(el)) hit = clean(el.value).toLowerCase().includes(w);
      if (!hit) return;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || !visible(el)) { hidden++; return; }
      count++;
      if (!first) first = el;
    });
    if (!first) {
      // Text split across elements ("Hello <b>world</b>"): the deepest element holding all of it.
      let el = document.body;
      if (el && clean(el.innerText).toLowerCase().includes(w)) {
        for (;;) {
          const next = Array.from(el.children).find((c) => clean(c.innerText).toLowerCase().includes(w));
          if (!next) break;
          el = next;
        }
        if (el !== document.body) { first = el; count = 1; }
      }
    }
    return { el: first, count, hidden };
  }

  function doScroll() {
    const dir = args.direction == null ? '' : clean(args.direction).toLowerCase();
    const text = args.text == null ? '' : clean(args.text);
    const hasTarget = !!clean(args.ref) || (args.selector != null && String(args.selector).trim() !== '');
    if ([!!dir, !!text, hasTarget].filter(Boolean).length !== 1) {
      throw refusal('bad_scroll', 'give exactly one of: direction ("up", "down", "top" or "bottom"), a ref or selector to scroll to, or a text to scroll to');
    }
    if (dir && !['up', 'down', 'top', 'bottom'].includes(dir)) {
      throw refusal('bad_scroll', `direction ${JSON.stringify(String(args.direction))} is not one of "up", "down", "top", "bottom"`);
    }
    let box = null, target = null, matches = 0;
    if (!dir) {
      if (text) {
        const f = findText(text);
        if (!f.el) {
          const why = f.hidden ? ` (it is only in ${f.hidden} hidden element${f.hidden > 1 ? 's' : ''})` : '';
          throw refusal('no_text', `no visible element contains ${JSON.stringify(text)}${why}`);
        }
        target = f.el;
        matches = f.count;
      } else {
        target = resolveTarget(args);
        inspectVisible(target, 'scroll to');
      }
      // The scroll area the target is in, when the window itself does not scroll.
      for (let p = target.parentElement; p; p = p.parentElement) {
        if (p.scrollHeight > p.clientHeight + 2 && /(auto|scroll|overlay)/.test(p.ownerDocument.defaultView.getComputedStyle(p).overflowY)) { box = p; break; }
      }
    } else {
      box = scrollArea();
    }
    const before = scrollState(box);
    S.scrollBefore = new WeakSet(viewItems().map((i) => i.el));
    S.scrollArea = box ? new WeakRef(box) : null;
    if (target) {
      target.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    } else {
      const view = box ? box.clientHeight : W.innerHeight;
      const step = Math.max(40, Math.round(view * 0.85));
      const top = { up: -step, down: step }[dir];
      const to = (o) => (box ? box.scrollTo(o) : W.scrollTo(o));
      if (top !== undefined) {
        if (box) box.scrollBy({ top, behavior: 'instant' }); else W.scrollBy({ top, behavior: 'instant' });
      } else {
        to({ top: dir === 'top' ? 0 : (box ? box.scrollHeight : (document.scrollingElement || document.documentElement).scrollHeight), behavior: 'instant' });
      }
    }
    return { before, target: target ? describe(target) : null, matches };
  }

  // After a scroll has settled: where the viewport is and what came into view.
  function doScrolled() {
    const seen = S.scrollBefore instanceof WeakSet ? S.scrollBefore : new WeakSet();
    const area = S.scrollArea && S.scrollArea.deref();
    const box = area && area.isConnected ? area : null;
    const items = viewItems();
    const fresh = items.filter((i) => !seen.has(i.el));
    const elements = fresh.filter((i) => i.k === 'e').slice(0, 20).map((i) => describe(i.el));
    const headings = fresh.filter((i) => i.k === 'h').slice(0, 10).map((i) => cut(textOf(i.el), MAX_NAME)).filter(Boolean);
    const blocks = fresh.filter((i) => i.k === 't');
    let text = '';
    for (const b of blocks) {
      if (blocks.some((o) => o.el !== b.el && o.el.contains(b.el))) continue;
      const t = textOf(b.el);
      if (t) text += (text ? ' ' : '') + t;
      if (text.length > 600) break;
    }
    const freshElements = fresh.filter((i) => i.k === 'e').length;
    return { state: scrollState(box), elements, moreElements: Math.max(0, freshElements - elements.length), headings, text: cut(text, 600), inView: items.filter((i) => i.k === 'e').length };
  }

  // ---- waiting: whether a condition holds now ----
  function pageText() {
    let text = document.body ? document.body.innerText : '';
    walk(document, { x: 0, y: 0 }, (el) => {
      if (el.shadowRoot) text += ' ' + el.shadowRoot.textContent;
      if (el.tagName === 'IFRAME') {
        try { if (el.contentDocument && el.contentDocument.body) text += ' ' + el.contentDocument.body.innerText; } catch (_) { /* cross-origin */ }
      }
    });
    return clean(text);
  }

  function shown(el) {
    const r = el.getBoundingClientRect();
    return el.isConnected && r.width > 0 && r.height > 0 && visible(el);
  }

  function doCheck() {
    const gone = args.gone === true;
    if (args.text != null) {
      const w = clean(args.text).toLowerCase();
      if (!w) throw refusal('empty_text', 'the text to wait for is empty');
      const present = pageText().toLowerCase().includes(w);
      return { met: present !== gone, present };
    }
    if (clean(args.ref)) {
      let el;
      try { el = resolveTarget({ ref: args.ref }); } catch (e) {
        if (e && e.code === 'stale_ref' && gone) return { met: true, present: false, removed: true };
        throw e;
      }
      const present = shown(el);
      return { met: present !== gone, present, target: describe(el) };
    }
    const sel = args.selector == null ? '' : String(args.selector);
    if (!sel.trim()) throw refusal('empty_selector', 'the selector is empty; give a ref from page_read or a CSS selector');
    const found = selectorMatches(args, sel).filter(shown);
    const present = found.length > 0;
    return { met: present !== gone, present, count: found.length, target: present ? describe(found[0]) : null };
  }

  // ---- real input: where to point, and what a key would do ----
  function doHoverPoint() {
    const el = resolveTarget(args);
    const d = inspectVisible(el, 'point at');
    inspectCovered(el, d, 'point at');
    const r = rectOf(el);
    return { target: d, x: r.x + r.w / 2, y: r.y + r.h / 2, before: snapshot() };
  }

  // The element keys go to: the focused one, through open shadow roots and same-origin frames.
  function focusedDeep() {
    let el = document.activeElement;
    for (;;) {
      if (el && el.shadowRoot && el.shadowRoot.activeElement) { el = el.shadowRoot.activeElement; continue; }
      if (el && (el.tagName === 'IFRAME' || el.tagName === 'FRAME')) {
        let d = null;
        try { d = el.contentDocument; } catch (_) { d = null; }
        if (d && d.activeElement && d.activeElement !== d.body) { el = d.activeElement; continue; }
      }
      break;
    }
    return !el || el === document.body || el === document.documentElement ? null : el;
  }

  function fieldState(el) {
    if (!el || isPassword(el)) return null;
    const t = tag(el);
    if (t === 'input' || t === 'textarea') {
      const out = { value: String(el.value) };
      try { if (typeof el.selectionStart === 'number') { out.selStart = el.selectionStart; out.selEnd = el.selectionEnd; } } catch (_) { /* no selection on this type */ }
      if (t === 'input' && ['checkbox', 'radio'].includes(el.type)) out.value = el.checked ? 'checked' : 'unchecked';
      return out;
    }
    if (t === 'select') return { value: Array.from(el.selectedOptions || []).map((o) => clean(o.label || o.text)).join(', ') };
    if (el.isContentEditable) return { value: textOf(el) };
    return null;
  }

  function doKeyTarget() {
    const key = String(args.key || '');
    const chord = String(args.chord || key);
    const given = !!clean(args.ref) || (args.selector != null && String(args.selector).trim() !== '');
    let el;
    if (given) {
      el = resolveTarget(args);
      const d0 = describe(el);
      if (isPassword(el)) throw refusal('password', `${d0.ref} is a password field; keys into passwords are left to the person`, { target: d0 });
      if (isDisabled(el)) throw refusal('disabled', `${d0.ref} (${d0.role} "${d0.name}") is disabled; a person could not press keys in it`, { target: d0 });
      inspectVisible(el, 'press keys in');
      inspectCovered(el, d0, 'press keys in');
      el.focus({ preventScroll: true });
      if (focusedDeep() !== el) throw refusal('not_focusable', `${d0.ref} cannot take keyboard focus, so the keys would go elsewhere; give the ref of a field, button or link, or omit the ref to press keys on the page`, { target: d0 });
    } else {
      el = focusedDeep();
    }
    const d = el ? describe(el) : null;
    if (el && isPassword(el)) throw refusal('password', `the focused element ${d.ref} is a password field; keys into passwords are left to the person (give a ref to press keys elsewhere)`, { target: d });
    if (el && (key === 'Enter' || key === ' ')) {
      const t = tag(el);
      const ty = (el.getAttribute('type') || 'text').toLowerCase();
      if (key === 'Enter' && t === 'input' && el.form && !['button', 'reset', 'file'].includes(ty) && !submitsForm(el)) {
        throw refusal('submits_form', `pressing Enter in ${d.ref} (${d.role} "${d.name}") would submit its form; submitting is left to the person`, { target: d });
      }
      if (submitsForm(el)) throw refusal('submits_form', `pressing ${chord} on ${d.ref} (${d.role} "${d.name}") would submit its form; submitting is left to the person`, { target: d });
      // Enter or Space on a button, link or button-like input is a click: the same words are
      // refused.
      if (!takesText(el)) {
        const m = commitWord(el, d);
        if (m) throw refusal('commit_action', `${d.ref} (${d.role} "${d.name}") reads like a commit action ("${m[0]}"); pressing ${chord} on it is left to the person`, { target: d });
      }
    }
    return { target: d, value: fieldState(el), before: snapshot() };
  }

  function doKeyAfter() {
    const f = focusedDeep();
    let value = null;
    if (clean(args.ref)) {
      try { value = fieldState(resolveTarget({ ref: args.ref })); } catch (_) { value = null; }
    }
    return { focus: f ? describe(f) : null, value, after: snapshot() };
  }

  // ---- file inputs: which one, and what it holds ----
  function doUploadTarget() {
    const el = resolveTarget(args);
    const d = describe(el);
    if (tag(el) !== 'input' || (el.getAttribute('type') || '').toLowerCase() !== 'file') {
      throw refusal('not_file_input', `${d.ref} (${d.role} "${d.name}") is not a file input; page_upload fills <input type=file> only`, { target: d });
    }
    if (isDisabled(el)) throw refusal('disabled', `${d.ref} (${d.role} "${d.name}") is disabled`, { target: d });
    const count = Number(args.count) || 0;
    if (count > 1 && !el.multiple) throw refusal('single_file', `${d.ref} takes one file, not ${count}`, { target: d });
    // A file input is often hidden behind a styled button: only the input's own state matters.
    return { target: d, n: Number(d.ref.slice(1)), accept: clean(el.getAttribute('accept')) };
  }

  function doUploadAfter() {
    const el = resolveTarget(args);
    return { target: describe(el), files: Array.from(el.files || []).map((f) => ({ name: f.name, size: f.size })) };
  }

  // ---- screenshots: an element's box, and the refs drawn on the page while it is captured ----
  const OVERLAY = '__agentToolsShotOverlay';
  const OVERLAY_COLORS = ['#d7191c', '#2c7bb6', '#1a9641', '#7b3294', '#e66101', '#008080'];
  const MAX_LABELS = 300;

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

  // The box of the element a ref names, in CSS pixels from the viewport's top left, scrolled
  // into view first as a person would before looking at it.
  async function doShotRect() {
    const el = resolveTarget({ ref: args.ref });
    let r = rectOf(el);
    if (r.w < 1 || r.h < 1 || !visible(el)) {
      throw refusal('not_visible', `${clean(args.ref)} is not visible on the page (hidden or without size): there is nothing to capture`);
    }
    if (r.x < 0 || r.y < 0 || r.x + r.w > W.innerWidth || r.y + r.h > W.innerHeight) {
      el.scrollIntoView({ block: 'center', inline: 'center' });
      await painted();
      r = rectOf(el);
    }
    return { x: r.x, y: r.y, width: r.w, height: r.h };
  }

  // A labelled box on every element a read gave a ref, in a closed shadow root placed in
  // document coordinates (a full-page capture shows the boxes where their elements are).
  async function doAnnotate() {
    removeOverlay();
    const host = document.createElement('div');
    host.id = OVERLAY;
    host.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;overflow:visible;pointer-events:none;z-index:2147483647;';
    const root = host.attachShadow({ mode: 'closed' });
    const labelled = [];
    for (const [num, weak] of S.byRef) {
      if (labelled.length >= MAX_LABELS) break;
      // The state lives on the page's window: a page can plant entries of its own there.
      if (!Number.isSafeInteger(num) || !(weak instanceof WeakRef)) continue;
      const el = weak.deref();
      if (!el || !el.isConnected || !visible(el)) continue;
      const r = rectOf(el);
      if (r.w < 1 || r.h < 1) continue;
      if (!args.full_page && (r.x + r.w < 0 || r.y + r.h < 0 || r.x > W.innerWidth || r.y > W.innerHeight)) continue;
      const color = OVERLAY_COLORS[labelled.length % OVERLAY_COLORS.length];
      const frame = document.createElement('div');
      frame.style.cssText = `position:absolute;box-sizing:border-box;left:${r.x + W.scrollX}px;top:${r.y + W.scrollY}px;width:${r.w}px;height:${r.h}px;border:2px solid ${color};`;
      const label = document.createElement('div');
      label.textContent = 'e' + num;
      // Above the box, or inside it at the top of the page.
      const above = r.y + W.scrollY >= 14;
      label.style.cssText = `position:absolute;left:-2px;top:${above ? -15 : 0}px;background:${color};color:#fff;font:bold 11px/13px monospace;padding:0 3px;white-space:nowrap;`;
      frame.appendChild(label);
      root.appendChild(frame);
      labelled.push('e' + num);
    }
    document.documentElement.appendChild(host);
    await painted();
    return { labelled };
  }

  function jsonIsPlain() {
    try {
      return typeof JSON === 'object' && JSON !== null && typeof JSON.stringify === 'function' &&
        [Object, Array, String, Number, Boolean].every((c) => !('toJSON' in c.prototype));
    } catch (_) { return false; }
  }

  let result;
  try {
    switch (op) {
      case 'read': result = read(); break;
      case 'text': result = doText(); break;
      case 'click': result = doClick(); break;
      case 'fill': result = await doFill(); break;
      case 'select': result = await doSelect(); break;
      case 'snapshot': result = snapshot(); break;
      case 'scroll': result = doScroll(); break;
      case 'scrolled': result = doScrolled(); break;
      case 'check': result = doCheck(); break;
      case 'hoverpoint': result = doHoverPoint(); break;
      case 'keytarget': result = doKeyTarget(); break;
      case 'keyafter': result = doKeyAfter(); break;
      case 'uploadtarget': result = doUploadTarget(); break;
      case 'uploadafter': result = doUploadAfter(); break;
      case 'shotrect': result = await doShotRect(); break;
      case 'annotate': result = await doAnnotate(); break;
      case 'unannotate': removeOverlay(); result = {}; break;
      case 'where': result = {}; break;
      default: result = refusal('bad_op', 'unknown operation ' + op);
    }
  } catch (e) {
    if (e && e.refused) result = e;
    else throw e;
  }
  result.issued = S.next;
  // The address the result came from: the Rust side names it as the result's source.
  result.at = location.href;
  // A read of a large page is thousands of items: as one JSON string it crosses to the host
  // in a fraction of the time the same object takes (the host serializes an object value by
  // value, property by property). Not when the page gave objects a toJSON of its own, which
  // JSON.stringify would call, nor when a text has a lone surrogate (JSON.stringify writes it
  // as an escape that strict JSON parsers refuse).
  if (op === 'read' && jsonIsPlain()) {
    const text = JSON.stringify(result);
    if (typeof text === 'string' && !/\\ud[89a-f]/.test(text)) return text;
  }
  return result;
}
