/**
 * The `sob review` page (docs/review.md): one self-contained HTML document, its CSS and script
 * inline under a per-response nonce, talking only to the local server's JSON API. Record content
 * is rendered with `textContent` only, never as HTML, so nothing from a record runs.
 */

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #dde1e6;padding:8px 16px;display:flex;gap:16px;align-items:center;z-index:2}
#wrap{display:flex;gap:12px;padding:12px}
#list{width:300px;flex:none;max-height:calc(100vh - 70px);overflow:auto;background:#fff;border:1px solid #dde1e6;border-radius:8px;margin:0;padding:6px 6px 6px 30px;font-size:12px}
#list li{cursor:pointer;padding:2px 4px;border-radius:4px}#list li.cur{background:#dbe8ff}
#list li .dec{color:#18794e;font-weight:600;margin-left:6px}#list li.dropped{text-decoration:line-through;color:#8a929c}
main{flex:1;min-width:0}.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:10px 12px;margin-bottom:10px;overflow:auto}
pre{white-space:pre-wrap;max-height:260px;overflow:auto;background:#f3f4f6;padding:8px;border-radius:6px;font-size:12px}
table{border-collapse:collapse;font-size:12px}th,td{padding:3px 8px;border-bottom:1px solid #eceef1;text-align:left;vertical-align:top;word-break:break-word;max-width:320px}
tr.cur td{background:#fff7d6}td.diff{color:#c4320a}td.diff::before{content:'\\2260 ';color:#c4320a}th.sel,td.sel{outline:2px solid #3b6fd8}
td.missing{color:#8a929c;font-style:italic}.reason{color:#6e56cf}.conflict{color:#c4320a;font-weight:600}
#status{font-weight:600}#status.saved{color:#18794e}#status.error{color:#c4320a}
.keys{color:#6b7480;font-size:12px}button{margin-right:6px}img.page{max-width:100%;border:1px solid #dde1e6}
#edit-row{display:none}#edit-row.open{display:block}#edit-error{color:#c4320a}
`;

/** The page's script (runs in the browser): state from /api/state, one record at a time. */
const CLIENT = String.raw`
(function(){
'use strict';
var token = new URLSearchParams(location.search).get('token') || '';
var S = null, R = null, cur = 0, sel = 0, busy = false;
function $(id){ return document.getElementById(id); }
function el(tag, text, cls){ var e = document.createElement(tag); if (text != null) e.textContent = String(text); if (cls) e.className = cls; return e; }
function api(path, body){
  var opts = body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  var sep = path.indexOf('?') < 0 ? '?' : '&';
  return fetch(path + sep + 'token=' + encodeURIComponent(token), opts).then(function(r){
    return r.json().then(function(j){ if (!r.ok) throw new Error(j && j.error ? j.error : ('HTTP ' + r.status)); return j; });
  });
}
function status(text, cls){ var s = $('status'); s.textContent = text; s.className = cls || ''; }
function item(){ return S.items[cur]; }
function mine(it){ return S.mine[it.record_id + '\u0000' + it.path]; }
function droppedRecord(id){ return S.dropped.indexOf(id) >= 0; }
function drawList(){
  var ol = $('list'); ol.textContent = '';
  S.items.forEach(function(it, i){
    var li = el('li', (it.record_id) + ' ' + (it.path || '(record)'));
    li.dataset.index = String(i);
    li.title = it.reasons.map(function(r){ return r.kind + ': ' + r.detail; }).join('\n');
    if (i === cur) li.className = 'cur';
    if (droppedRecord(it.record_id)) li.classList.add('dropped');
    var d = mine(it); if (d) li.appendChild(el('span', d.decision, 'dec'));
    li.addEventListener('click', function(){ go(i); });
    ol.appendChild(li);
  });
  var c = ol.querySelector('li.cur'); if (c && c.scrollIntoView) c.scrollIntoView({ block: 'nearest' });
}
function go(i){
  if (!S.items.length) return;
  cur = Math.max(0, Math.min(S.items.length - 1, i));
  $('cursor').dataset.index = String(cur);
  $('cursor').textContent = (cur + 1) + ' / ' + S.items.length;
  closeEdit();
  var it = item();
  if (!R || R.id !== it.record_id) {
    return api('/api/record?id=' + encodeURIComponent(it.record_id)).then(function(r){ R = r; pickModel(); drawRecord(); drawList(); })
      .catch(function(e){ status('error: ' + e.message, 'error'); });
  }
  pickModel(); drawRecord(); drawList();
  return Promise.resolve();
}
function pickModel(){
  var it = item(); sel = 0;
  var agree = it.reasons.filter(function(r){ return r.models && r.models.length; })[0];
  var row = R.gold.findIndex(function(g){ return g.path === it.path; });
  for (var m = 0; m < R.models.length; m++) {
    if (agree ? agree.models.indexOf(R.models[m].model) >= 0 : (row >= 0 && R.models[m].values[row] !== R.gold[row].text && R.models[m].values[row] != null)) { sel = m; return; }
  }
}
function nextOpen(from, dir){
  for (var i = from; i >= 0 && i < S.items.length; i += dir) if (!droppedRecord(S.items[i].record_id)) return i;
  return from - dir;
}
function drawRecord(){
  var it = item();
  $('rid').textContent = R.id;
  $('leaf-path').textContent = it.path || '(the whole record)';
  var rs = $('reasons'); rs.textContent = '';
  it.reasons.forEach(function(r){ rs.appendChild(el('li', r.kind + ': ' + r.detail, 'reason')); });
  var others = $('others'); others.textContent = '';
  var d = mine(it);
  (S.others[it.record_id + '\u0000' + it.path] || []).forEach(function(o){
    var differs = d && (o.decision !== d.decision || o.after_text !== d.after_text);
    others.appendChild(el('li', o.reviewer + ': ' + o.decision + (o.after_text ? ' -> ' + o.after_text : '') + (differs ? '  (disagrees with yours)' : ''), differs ? 'conflict' : ''));
  });
  $('mine').textContent = d ? ('your decision: ' + d.decision + (d.after_text ? ' -> ' + d.after_text : '') + (d.note ? ' (note: ' + d.note + ')' : '')) : 'not decided';
  $('question').textContent = R.question;
  $('context').textContent = R.context;
  $('schema').textContent = R.schema_text;
  var imgs = $('images'); imgs.textContent = '';
  R.attachments.forEach(function(a){
    if (a.url) { var im = document.createElement('img'); im.className = 'page'; im.alt = a.path; im.src = a.url + '&token=' + encodeURIComponent(token); imgs.appendChild(im); }
    else imgs.appendChild(el('p', a.kind + ' ' + a.path + ': ' + a.note, 'reason'));
  });
  var t = $('leaves'); t.textContent = '';
  var hr = document.createElement('tr');
  hr.appendChild(el('th', 'path')); hr.appendChild(el('th', 'gold'));
  R.models.forEach(function(m, i){ var th = el('th', (i < 9 ? (i + 1) + ': ' : '') + m.model + (m.parsed ? '' : ' (no JSON answer)')); if (i === sel) th.className = 'sel'; hr.appendChild(th); });
  t.appendChild(hr);
  R.gold.forEach(function(g, row){
    var tr = document.createElement('tr'); if (g.path === it.path) tr.className = 'cur';
    tr.appendChild(el('td', g.path)); tr.appendChild(el('td', g.text));
    R.models.forEach(function(m, i){
      var v = m.values[row];
      var td = el('td', v == null ? 'missing' : v, v == null ? 'missing' : (m.same[row] ? '' : 'diff'));
      if (i === sel) td.classList.add('sel');
      tr.appendChild(td);
    });
    t.appendChild(tr);
  });
}
function decide(kind, extra){
  if (busy || !S.items.length) return;
  var it = item();
  var body = { record_id: it.record_id, path: it.path, decision: kind, note: $('note').value };
  if (kind === 'alternative') body.model = R.models[sel] ? R.models[sel].model : '';
  if (extra) Object.keys(extra).forEach(function(k){ body[k] = extra[k]; });
  busy = true; delete $('status').dataset.at; status('saving...', '');
  return api('/api/decision', body).then(function(res){
    busy = false; S = res.state; $('note').value = ''; closeEdit();
    var said = 'saved: ' + kind + ' at ' + it.record_id + ' ' + (it.path || '(record)');
    status(said, 'saved');
    // Said again once the next leaf is drawn: "saved" then always shows the leaf after it.
    return go(nextOpen(cur + 1, 1) < S.items.length ? nextOpen(cur + 1, 1) : cur).then(function(){ status(said, 'saved'); $('status').dataset.at = String(cur); });
  }, function(e){
    busy = false; status('not saved: ' + e.message, 'error');
    if (kind === 'gold_wrong') { $('edit-error').textContent = e.message; openEdit(true); }
  });
}
function undo(){
  if (busy) return; busy = true; delete $('status').dataset.at; status('undoing...', '');
  api('/api/undo', {}).then(function(res){
    busy = false; S = res.state; status(res.undone ? 'undone: ' + res.undone.decision + ' at ' + res.undone.record_id + ' ' + (res.undone.path || '(record)') : 'nothing to undo', 'saved');
    var i = res.undone ? S.items.findIndex(function(x){ return x.record_id === res.undone.record_id && x.path === res.undone.path; }) : cur;
    R = null; return go(i >= 0 ? i : cur).then(function(){ $('status').dataset.at = String(cur); });
  }).catch(function(e){ busy = false; status('not undone: ' + e.message, 'error'); });
}
function openEdit(keep){
  var it = item(); if (!it) return;
  $('edit-row').className = 'open';
  if (!keep) {
    var row = R.gold.findIndex(function(g){ return g.path === it.path; });
    var m = R.models[sel];
    $('edit').value = row >= 0 ? ((m && m.values[row] != null) ? m.values[row] : R.gold[row].text) : R.gold_text;
    $('edit-error').textContent = '';
  }
  $('edit').focus(); $('edit').select();
}
function closeEdit(){ $('edit-row').className = ''; if (document.activeElement === $('edit')) $('edit').blur(); }
document.addEventListener('keydown', function(ev){
  var tgt = ev.target;
  if (tgt === $('edit')) {
    if (ev.key === 'Enter') { ev.preventDefault(); decide('gold_wrong', { value: $('edit').value }); }
    else if (ev.key === 'Escape') { ev.preventDefault(); closeEdit(); }
    return;
  }
  if (tgt === $('note')) { if (ev.key === 'Enter' || ev.key === 'Escape') { ev.preventDefault(); $('note').blur(); } return; }
  if (ev.ctrlKey || ev.metaKey || ev.altKey || !S) return;
  var k = ev.key, done = true;
  if (k === 'j' || k === 'ArrowDown' || k === 'ArrowRight') go(nextOpen(cur + 1, 1));
  else if (k === 'k' || k === 'ArrowUp' || k === 'ArrowLeft') go(nextOpen(cur - 1, -1));
  else if (k === 'g') decide('gold_right');
  else if (k === 'a') decide('alternative');
  else if (k === 'w' || k === 'e') openEdit(false);
  else if (k === 'd') decide('drop');
  else if (k === 'u') undo();
  else if (k === 'n') $('note').focus();
  else if (/^[1-9]$/.test(k) && R && Number(k) <= R.models.length) { sel = Number(k) - 1; drawRecord(); }
  else done = false;
  if (done) ev.preventDefault();
});
$('b-right').addEventListener('click', function(){ decide('gold_right'); });
$('b-alt').addEventListener('click', function(){ decide('alternative'); });
$('b-wrong').addEventListener('click', function(){ openEdit(false); });
$('b-drop').addEventListener('click', function(){ decide('drop'); });
$('b-undo').addEventListener('click', undo);
$('b-prev').addEventListener('click', function(){ go(nextOpen(cur - 1, -1)); });
$('b-next').addEventListener('click', function(){ go(nextOpen(cur + 1, 1)); });
api('/api/state').then(function(s){
  S = s; $('reviewer').textContent = 'reviewer: ' + s.reviewer;
  $('count').textContent = s.items.length + ' flagged';
  if (!s.items.length) { status('nothing flagged', 'saved'); return; }
  go(s.cursor);
  document.body.dataset.ready = '1';
}).catch(function(e){ status('error: ' + e.message, 'error'); });
})();
`;

/** The whole page; `nonce` authorises its one style and one script (the server sends the CSP). */
export function reviewPage(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${reviewCsp(nonce)}">
<meta name="referrer" content="no-referrer">
<title>sob review</title><style nonce="${nonce}">${CSS}</style></head>
<body>
<header><strong>sob review</strong><span id="reviewer"></span><span id="count"></span><span id="cursor" data-index="-1"></span><span id="status"></span>
<span class="keys">j/k next/prev · g gold right · a accept the selected answer (1-9 picks) · w/e edit gold · d drop record · n note · u undo</span></header>
<div id="wrap"><ol id="list"></ol>
<main>
<div class="card"><h2><span id="rid"></span> · <span id="leaf-path"></span></h2><ul id="reasons"></ul>
<p id="mine"></p><ul id="others"></ul>
<div><button id="b-prev">prev (k)</button><button id="b-next">next (j)</button><button id="b-right">gold right (g)</button><button id="b-alt">alternative (a)</button><button id="b-wrong">gold wrong (w)</button><button id="b-drop">drop record (d)</button><button id="b-undo">undo (u)</button>
<label>note <input id="note" size="40" autocomplete="off"></label></div>
<div id="edit-row"><label>right value (JSON; text without quotes is a string) <input id="edit" size="60" autocomplete="off"></label> Enter saves, Esc cancels <span id="edit-error"></span></div>
</div>
<div class="card"><table id="leaves"></table></div>
<div class="card"><h3>Question</h3><p id="question"></p><div id="images"></div><h3>Context</h3><pre id="context"></pre>
<details><summary>Schema</summary><pre id="schema"></pre></details></div>
</main></div>
<script nonce="${nonce}">${CLIENT}</script>
</body></html>
`;
}

/** No script, style or image but the page's own and the server's; no request elsewhere. */
export function reviewCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
