import { LENIENT_CLIENT, LENIENT_CSS } from './lenient-client.ts';

/**
 * The report page's own CSS and script (inlined into report.html; no network, no framework).
 * The script reads the embedded JSON, draws tables and SVG charts, and renders the record
 * drill-down a page at a time. Models are referred to by index (D.models / D.names): a folder
 * name is never used as an object key, so `constructor` or `__proto__` are names like any other.
 */

export const REPORT_CSS = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
#app{max-width:1280px;margin:0 auto;padding:16px 24px 64px}
#record-page{float:right;max-width:42%;margin:0 0 10px 14px;border:1px solid #dde1e6;border-radius:6px;padding:6px;background:#fafbfc}#record-page img{display:block;max-width:100%;height:auto}#record-page figcaption{font-size:12px;margin-top:4px;word-break:break-all}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde1e6;padding-bottom:4px}
.muted{color:#6b7480}.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:12px 14px;margin:10px 0;overflow:auto}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}th,td{padding:3px 8px;text-align:right;white-space:nowrap}
th{font-weight:600;border-bottom:1px solid #c9ced6}td:first-child,th:first-child,td.l,th.l{text-align:left}
th.sort{cursor:pointer;user-select:none}th.sort::after{content:' \\2195';color:#b0b6bf;font-weight:400}
th[aria-sort=ascending]::after{content:' \\25B2';color:#1d232b}th[aria-sort=descending]::after{content:' \\25BC';color:#1d232b}
tr:nth-child(even) td{background:#fafbfc}.ci{color:#8a929c;font-size:11px;display:block;line-height:1.2}
td.paths{white-space:normal;word-break:break-word;min-width:180px;max-width:360px;text-align:left;font-size:12px}
#taxonomy th{white-space:normal;vertical-align:bottom;min-width:64px}
#pairwise th,#pairwise td{padding:2px 5px;font-size:12px}#pairwise thead th{white-space:normal;overflow-wrap:anywhere;vertical-align:bottom;max-width:10em}td.nc{color:#8a929c}
.chart-title{font:600 12px system-ui,sans-serif}td.warn{color:#c4320a;font-weight:600}
#quality-table th{white-space:normal;vertical-align:bottom}.quirk{color:#6e56cf;cursor:help}
nav a{margin-right:14px}svg text{font:11px system-ui,sans-serif}
.filters select,.filters input{margin:0 10px 6px 4px}.rec{cursor:pointer}.rec:hover td{background:#eef4ff}
.diff td{white-space:normal;max-width:420px;word-break:break-word}.s0{color:#18794e}.s1{color:#c4320a}.s2{color:#9a6700}.s3{color:#6e56cf}
pre{white-space:pre-wrap;max-height:280px;overflow:auto;background:#f3f4f6;padding:8px;border-radius:6px;font-size:12px}
.notice{border-color:#e5b567;background:#fffaf0}.notice ul{margin:4px 0 8px;padding-left:20px}
.pill{display:inline-block;padding:0 6px;border-radius:9px;background:#eef0f3;font-size:12px;margin-left:6px}
button.more{border:0;background:none;color:#2563eb;cursor:pointer;padding:0 4px;font:inherit}
${LENIENT_CSS}`;

export const REPORT_CLIENT = `
(function(){
'use strict';
var D=JSON.parse(document.getElementById('sob-data').textContent);
var app=document.getElementById('app');
var SOURCES=['text','image','audio'];
var CUSTOM=D.custom||[];
var METRICS=[['value_accuracy','Val.Acc.'],['faithfulness','Faithful.'],['json_pass','JSON Pass'],['path_recall','Path Rec.'],['structure_coverage','Str.Cov.'],['type_safety','Type Saf.'],['perfect','Perfect']];
var KEYS={value_accuracy:'leaf_value_em',faithfulness:'value_token_f1',json_pass:'schema_compliance',path_recall:'hier_path_recall',structure_coverage:'path_set_f1',type_safety:'type_precision',perfect:'strict_json_em'};
var STATUS=['match','wrong value','missing','extra'];
/** How much of a question / context / schema shows before "show all". */
var SHOWN={question:300,context:1500,schema:1500};

function el(tag,attrs,kids){
  var e=document.createElement(tag);
  if(attrs)Object.keys(attrs).forEach(function(k){var v=attrs[k];
    if(k==='text')e.textContent=v;else if(k==='html')e.innerHTML=v;
    else if(k.slice(0,2)==='on')e.addEventListener(k.slice(2),v);else e.setAttribute(k,v);});
  (kids||[]).forEach(function(c){if(c!=null)e.appendChild(typeof c==='string'?document.createTextNode(c):c);});
  return e;
}
function f3(x){return typeof x==='number'?x.toFixed(3):'-';}
function esc(s){return String(s).replace(/[&<>"]/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
function own(o,k){return o!=null&&Object.prototype.hasOwnProperty.call(o,k)?o[k]:undefined;}
function nameOf(mi){return D.names[mi];}
function section(id,title,sub){var s=el('section',{id:id},[el('h2',{text:title})]);if(sub)s.appendChild(el('p',{class:'muted',text:sub}));app.appendChild(s);return s;}
function sortable(table,rows,cols,render){
  var body=el('tbody');table.appendChild(body);var key=null,dir=-1;
  function draw(){body.textContent='';var r=rows.slice();
    if(key!==null)r.sort(function(a,b){var x=cols[key].get(a),y=cols[key].get(b);if(x===y)return 0;if(x==null)return 1;if(y==null)return -1;return (x<y?-1:1)*dir;});
    r.forEach(function(row,i){body.appendChild(render(row,i));});}
  var head=el('tr');var ths=[];
  cols.forEach(function(c,i){var th=el('th',{text:c.label,class:(c.left?'l ':'')+(c.get?'sort':''),title:c.title||(c.get?'click to sort':'')});
    if(c.get)th.addEventListener('click',function(){if(key===i)dir=-dir;else{key=i;dir=c.left?1:-1;}ths.forEach(function(h){h.removeAttribute('aria-sort');});th.setAttribute('aria-sort',dir>0?'ascending':'descending');draw();});
    ths.push(th);head.appendChild(th);});
  table.insertBefore(el('thead',null,[head]),body);draw();
}
/**
 * A long text shown in part: the first n characters and a button that shows the rest of what
 * the report embeds (and, when the report itself keeps only part, how much).
 */
function clipped(tag,id,text,full,n){
  var box=el(tag,{id:id});
  var cut=full!==undefined&&full>text.length;
  var note=cut?(' [the report keeps the first '+text.length+' of '+full+' characters; the whole text is in the response file]'):'';
  if(text.length<=n){box.textContent=text+note;return box;}
  var body=el('span',{class:'clip',text:text.slice(0,n)+'…'});
  var more=el('button',{class:'more',type:'button',text:'show all ('+(full||text.length)+' characters)'});
  more.addEventListener('click',function(){
    var open=more.getAttribute('data-open')==='1';
    body.textContent=open?text.slice(0,n)+'…':text+note;
    more.textContent=open?('show all ('+(full||text.length)+' characters)'):'show less';
    more.setAttribute('data-open',open?'0':'1');
  });
  box.appendChild(body);box.appendChild(more);return box;
}

app.textContent='';
app.appendChild(el('h1',{text:'sob-eval report'}));
/** Which fields to trust: per field and model, accuracy with its 95% interval and n, worst first. */
function fieldsSection(){
  if(!D.fields)return;var F=D.fields;
  var s=section('fields','Which fields to trust','Per field (array indices collapsed: line_items[].amount) and model: the share of ground-truth leaves answered right, with a 95% Wilson interval and n, worst first. "By" says which verdict counts: lenient (the comparator that decided, for answers scored with --match) or exact. Click a column to sort.'+(F.perSchema?' Records do not share one schema: one row per schema (its short hash).':''));
  var nm=function(m){var i=D.models.indexOf(m);return i<0?m:D.names[i];};
  var fc=[{label:'Field',left:true,get:function(r){return r.field;}}]
    .concat(F.perSchema?[{label:'Schema',left:true,get:function(r){return r.schema;}}]:[])
    .concat([{label:'Model',left:true,get:function(r){return nm(r.model);}},
    {label:'Accuracy',get:function(r){return r.accuracy;}},
    {label:'95% CI',title:'Wilson score interval',get:function(r){return r.ci95_low;},text:function(r){return '['+f3(r.ci95_low)+', '+f3(r.ci95_high)+']';}},
    {label:'n',get:function(r){return r.n;},text:function(r){return String(r.n);}},
    {label:'By',left:true,get:function(r){return r.by;}},
    {label:'Exact',title:'the exact comparison in place, over every leaf of the field',get:function(r){return r.exact_accuracy;}}]);
  var tb=el('table',{id:'fields-table'});
  sortable(tb,F.stats,fc,function(r){var tr=el('tr',{'data-field':r.field,'data-model':r.model});fc.forEach(function(c){var v=c.text?c.text(r):c.get(r);tr.appendChild(el('td',{class:c.left?'l':'',text:typeof v==='number'?f3(v):v==null?'-':String(v)}));});return tr;});
  s.appendChild(el('div',{class:'card'},[tb]));
  if(F.total>F.stats.length)s.appendChild(el('p',{class:'muted',text:F.stats.length+' of '+F.total+' field rows shown (the worst); sob leaderboard --format json has them all.'}));
}
var H={el:el,sortable:sortable,clipped:clipped,section:section};
if(D.compliance&&!D.leaderboard.length){SOB_COMPLIANCE.render(D,app,H);return;}
app.appendChild(el('p',{class:'muted',text:D.models.length+' models, '+D.records.length+' records; generated '+D.generated+' from '+D.where}));
// Past the embedding limit: the sampling rule, stated where the record counts are.
var SMP=D.sampling;function samplingText(){return 'This evaluation has '+SMP.records+' records, more than the '+SMP.limit+' a page embeds: the page holds '+SMP.embedded+' of them, the '+SMP.worst+' with the lowest Value Accuracy per model and a seeded random sample of '+SMP.random+' (seed '+SMP.seed+', by a hash of the record id). The leaderboard, per-source tables and error taxonomy count every record; the pairwise matrix uses the random sample; every record is in the evaluation folder, in eval_records.jsonl.';}
if(SMP)app.appendChild(el('p',{class:'note',id:'sampling',text:samplingText()}));
// Which profile scored these numbers, and why (each summary's profile_reason).
if(D.profile)app.appendChild(el('p',{id:'profile',class:'muted',text:D.profile}));
// The schema records' validation protocol, and why (each schema summary's protocol_reason).
if(D.compliance&&D.compliance.summaries&&D.compliance.summaries.length){var PR=[];D.compliance.summaries.forEach(function(s){var t=(s.protocol||'dialect')+(s.protocolReason?' ('+s.protocolReason+')':'');if(PR.indexOf(t)<0)PR.push(t);});app.appendChild(el('p',{id:'protocol',class:'muted',text:(PR.length===1?'Validation protocol: ':'Validation protocols differ: ')+PR.join('; ')}));}
if(D.skipped.length||D.warnings.length){
  var nb=el('div',{class:'card notice',id:'notices'});
  if(D.skipped.length){nb.appendChild(el('b',{text:'Left out of this report'}));var ul=el('ul',{id:'skipped'});D.skipped.forEach(function(s){ul.appendChild(el('li',null,[el('code',{text:s.folder}),': '+s.reason]));});nb.appendChild(ul);}
  if(D.warnings.length){nb.appendChild(el('b',{text:'Read the numbers with care'}));var wl=el('ul',{id:'warnings'});D.warnings.forEach(function(w){wl.appendChild(el('li',{text:w}));});nb.appendChild(wl);}
  app.appendChild(nb);
}
app.appendChild(el('nav',null,[['lb','Leaderboard']].concat(lenientNav()).concat(D.fields?[['fields','Which fields to trust']]:[]).concat([['src','Per source'],['quality','Data quality'],['fig','JSON Pass vs Value Accuracy'],['ranks','Rank shifts'],['tax','Errors'],['cmp','Pairwise'],['drill','Records']]).concat(D.compliance?[['compliance','Schema compliance']]:[]).map(function(x){return el('a',{href:'#'+x[0],text:x[1]});})));

// Unified leaderboard (paper Table 2)
var lb=section('lb','Unified leaderboard','Overall = mean of the seven aggregates x coverage (records scored / records in the benchmark); sources weighted by their total schema-complexity weight W. Click a column to sort.');
// Benchmark totals: the sources that have records or results, each origin said once for the sources it covers
(function(){var shown=SOURCES.filter(function(s){return D.totals.records[s]>0||own(D.perSource,s);});var groups=[];
  shown.forEach(function(s){var note=D.totals.note[s];var g=groups.find(function(x){return x.note===note;});if(!g)groups.push(g={note:note,sources:[]});g.sources.push(s);});
  lb.appendChild(el('div',{class:'card',id:'totals'},[el('b',{text:'Benchmark totals'})].concat(groups.map(function(g){
    return el('div',{class:'totals-line'},g.sources.map(function(s,i){return el('span',{'data-source':s,text:(i?' · ':'')+s+' '+D.totals.records[s]+' records, W '+D.totals.weight[s]});}).concat([el('span',{class:'muted',text:' — from '+g.note})]));}))));})();
var t=el('table',{id:'leaderboard'});lb.appendChild(el('div',{class:'card'},[t]));
var cols=[{label:'#',get:function(r){return r._rank;}},{label:'Model',left:true,get:function(r){return r.display_name;}},{label:'Overall',get:function(r){return r.overall;}}]
  .concat(METRICS.map(function(m){return {label:m[1],get:function(r){return r[m[0]];}};}))
  .concat(CUSTOM.map(function(k){return {label:k,title:'your scorer (--scorer): weighted over sources as the metrics are; its 95% interval when the model has one source',get:function(r){var c=r.custom&&own(r.custom,k);return c?c.value:null;},text:function(r){var c=r.custom&&own(r.custom,k);if(!c)return '-';var per=Object.keys(c.per_modality).map(function(s){return c.per_modality[s];});var one=per.length===1?per[0]:null;return f3(c.value)+(one&&one.ci95_low!=null?' ['+one.ci95_low.toFixed(3)+', '+one.ci95_high.toFixed(3)+']':'');}};}))
  .concat([{label:'Coverage',get:function(r){return r.coverage;}},{label:'Sources',left:true,get:function(r){return r.modalities.join('+');}}]);
cols=lenientCols(cols);
D.leaderboard.forEach(function(r,i){r._rank=i+1;});
sortable(t,D.leaderboard,cols,function(r){var tr=el('tr',{'data-model':r.model});cols.forEach(function(c,i){var v=c.get(r);tr.appendChild(el('td',{class:c.left?'l':'',text:c.text?c.text(r):typeof v==='number'&&i>=2?f3(v):String(v)}));});return tr;});
// Cost and speed beside accuracy, where the answers' eval_info was found: its own table, in leaderboard order
if(D.leaderboard.some(function(r){return r.usage;})){
  var U=function(r){return r.usage||{latency_ms:{},ttft_ms:{}};};
  var num=function(v,f){return typeof v==='number'?f(v):'-';};
  var ms=function(v){return String(Math.round(v));};
  var pp=function(p){return p&&typeof p.p50==='number'?ms(p.p50)+' / '+ms(p.p95):'-';};
  var ucols=[{label:'#',get:function(r){return r._rank;}},{label:'Model',left:true,get:function(r){return r.display_name;}},
    {label:'Value Accuracy',get:function(r){return r.value_accuracy;},text:function(r){return f3(r.value_accuracy);}},
    {label:'Answers',get:function(r){return U(r).answers;},text:function(r){return num(U(r).answers,String);}},
    {label:'Tokens in',title:'input tokens, all answers',get:function(r){return U(r).input_tokens;},text:function(r){return num(U(r).input_tokens,ms);}},
    {label:'Tokens out',title:'output tokens, all answers',get:function(r){return U(r).output_tokens;},text:function(r){return num(U(r).output_tokens,ms);}},
    {label:'Cost',title:'total cost where the provider priced the answers',get:function(r){return U(r).cost;},text:function(r){return num(U(r).cost,function(v){return '$'+v.toFixed(v<1?4:2);});}},
    {label:'Latency p50 / p95 ms',title:'total time per answer, 50th / 95th percentile (cached answers left out)',get:function(r){return U(r).latency_ms.p50;},text:function(r){return pp(U(r).latency_ms);}},
    {label:'TTFT p50 / p95 ms',title:'time to first token (streamed answers), 50th / 95th percentile',get:function(r){return U(r).ttft_ms.p50;},text:function(r){return pp(U(r).ttft_ms);}}];
  var ut=el('table',{id:'usage'});
  lb.appendChild(el('h3',{text:'Cost and speed'}));
  lb.appendChild(el('div',{class:'card'},[el('p',{class:'note',text:"Totals over each model's answers (cost where the provider priced them); latency and time to first token: 50th / 95th percentiles. - = not recorded."}),ut]));
  sortable(ut,D.leaderboard,ucols,function(r){var tr=el('tr',{'data-model':r.model});ucols.forEach(function(c){tr.appendChild(el('td',{class:c.left?'l':'',text:c.text?c.text(r):String(c.get(r))}));});return tr;});
  // Per unit (the mode asked in, pages, cost per record, page and correct field): a table of its own.
  if(D.leaderboard.some(function(r){return r.usage&&typeof r.usage.pages==='number';})){
    var um=function(v){return typeof v==='number'?'$'+(v>=1?v.toFixed(2):v.toPrecision(3)):'-';};
    var ncols=ucols.slice(0,3).concat([
      {label:'Input',left:true,title:'the input mode the answers were asked in (--input)',get:function(r){return U(r).input_mode||'-';}},
      {label:'Pages',title:"pages the answered records' documents show",get:function(r){return U(r).pages;},text:function(r){return num(U(r).pages,String);}},
      {label:'Cost / record',get:function(r){return U(r).cost_per_record;},text:function(r){return um(U(r).cost_per_record);}},
      {label:'Cost / page',get:function(r){return U(r).cost_per_page;},text:function(r){return um(U(r).cost_per_page);}},
      {label:'Cost / correct field',title:'cost per ground-truth leaf answered right',get:function(r){return U(r).cost_per_correct_field;},text:function(r){return um(U(r).cost_per_correct_field);}},
      {label:'Tokens in / record',get:function(r){return U(r).input_tokens_per_record;},text:function(r){return num(U(r).input_tokens_per_record,ms);}},
      {label:'Tokens in / page',title:'input tokens as the provider reported them, per page',get:function(r){return U(r).input_tokens_per_page;},text:function(r){return num(U(r).input_tokens_per_page,ms);}}]);
    var nt=el('table',{id:'usage-units'});
    lb.appendChild(el('h3',{text:'Cost per unit'}));
    lb.appendChild(el('div',{class:'card'},[el('p',{class:'note',text:"Per answered record, per page (a PDF's pages, else its page images) and per ground-truth leaf answered right, in the input mode the answers were asked in. - = not known (no price, no pages)."}),nt]));
    sortable(nt,D.leaderboard,ncols,function(r){var tr=el('tr',{'data-model':r.model});ncols.forEach(function(c){tr.appendChild(el('td',{class:c.left?'l':'',text:c.text?c.text(r):String(c.get(r))}));});return tr;});
  }
}
lenientSection();
fieldsSection();

// Per-source tables (paper Tables 4-6), sorted by Value Accuracy, with 95% intervals and ranks
var src=section('src','Per source','Schema-complexity weighted means with 95% bootstrap intervals; rank by Value Accuracy.');
/** source -> Map(model index -> Value Accuracy rank) */
var ranks=new Map();
SOURCES.forEach(function(s){
  var list=own(D.perSource,s);if(!list)return;
  list=list.slice().sort(function(a,b){return (own(b.weighted,'leaf_value_em')||0)-(own(a.weighted,'leaf_value_em')||0);});
  var rk=new Map();list.forEach(function(r,i){rk.set(r.m,i+1);});ranks.set(s,rk);
  var tb=el('table',{id:'source-'+s});
  var scols=[{label:'#',get:function(r){return rk.get(r.m);}},{label:'Model',left:true,get:function(r){return nameOf(r.m);}},{label:'n',get:function(r){return r.n;}}]
    .concat(METRICS.map(function(m){var k=KEYS[m[0]];return {label:m[1],title:'weighted mean, 95% interval below; click to sort',get:function(r){return own(r.weighted,k);},cell:function(r){var ci=own(r.ci,k);return el('td',null,[f3(own(r.weighted,k)),ci?el('span',{class:'ci',text:'['+ci[0].toFixed(3)+', '+ci[1].toFixed(3)+']'}):null]);}};}))
    .concat(CUSTOM.map(function(k){var C=function(r){return r.custom||{weighted:{},ci:{}};};return {label:k,title:'your scorer (--scorer): weighted mean, 95% interval below',get:function(r){return own(C(r).weighted,k);},cell:function(r){var v=own(C(r).weighted,k);if(v==null)return el('td',{text:'-'});var ci=own(C(r).ci,k);return el('td',null,[f3(v),ci?el('span',{class:'ci',text:'['+ci[0].toFixed(3)+', '+ci[1].toFixed(3)+']'}):null]);}};}));
  sortable(tb,list,scols,function(r){var tr=el('tr');scols.forEach(function(c){tr.appendChild(c.cell?c.cell(r):el('td',{class:c.left?'l':'',text:String(c.get(r))}));});return tr;});
  src.appendChild(el('h3',{text:s+' ('+list.length+' models)'}));src.appendChild(el('div',{class:'card'},[tb]));
  // Bars: the metric is named in the chart's title and axis.
  var w=760,bh=14,top=34,h=list.length*bh+top+24;
  var svg='<svg id="bars-'+s+'" width="'+w+'" height="'+h+'" role="img" aria-label="Value Accuracy (schema-complexity weighted mean) by model, '+s+'">';
  svg+='<text class="chart-title" x="0" y="14">Value Accuracy by model, '+s+' (schema-complexity weighted mean)</text>';
  list.forEach(function(r,i){var v=own(r.weighted,'leaf_value_em')||0;var y=top+i*bh;svg+='<text x="0" y="'+(y+10)+'">'+esc(nameOf(r.m).slice(0,28))+'</text><rect x="200" y="'+y+'" width="'+(v*520).toFixed(1)+'" height="'+(bh-3)+'" fill="#3b82f6"><title>'+esc(nameOf(r.m))+': Value Accuracy '+v.toFixed(3)+'</title></rect><text x="'+(205+v*520).toFixed(1)+'" y="'+(y+10)+'">'+v.toFixed(3)+'</text>';});
  var ay=top+list.length*bh+4;svg+='<line x1="200" y1="'+ay+'" x2="720" y2="'+ay+'" stroke="#999"/>';
  for(var g=0;g<=10;g+=2)svg+='<text x="'+(200+52*g-6)+'" y="'+(ay+14)+'">'+(g/10).toFixed(1)+'</text>';
  svg+='</svg>';src.appendChild(el('div',{class:'card'},[el('div',{html:svg})]));
});

// Data quality: the profile each summary was scored with and what the scorer counted
var dq=section('quality','Data quality','The profile each summary was scored with (sob: parity with the published leaderboard, quirks included; strict: the quirks fixed), and what the scorer counted: repeated record ids, benchmark records without an answer, answers whose id the benchmark does not have. - = not recorded.');
(function(){var profiles=new Set(D.quality.map(function(q){return q.profile;}));
if(profiles.size>1)dq.appendChild(el('p',{class:'card notice',id:'mixed-profiles',text:'Mixed profiles: '+Array.from(profiles).sort().join(', ')+'. Numbers scored with different profiles do not compare; score every model with one --profile.'}));
var tb=el('table',{id:'quality-table'});
function num(k){return function(q){return q[k];};}
var qcols=[{label:'Model',left:true,get:function(q){return nameOf(q.m);}},{label:'Source',left:true,get:function(q){return q.source;}},{label:'Profile',left:true,get:function(q){return q.profile;},text:function(q){return q.stated?q.profile:q.profile+' (not stated)';}},
  {label:'n',get:num('n')},{label:'distinct ids',get:num('distinct')},{label:'repeated ids',get:num('duplicates')},{label:'not answered',title:'benchmark records missing from the answers',get:num('missing')},{label:'not in benchmark',title:'answers with ids the benchmark does not have',get:num('unknown')},
  {label:'parse failures',title:'answers that did not parse (strict: not even after recovery)',get:num('parseFailures')},{label:'parsed after recovery',title:'answers that parsed only once a code fence or the text around the JSON was removed (strict profile; scored, and counted in JSON Pass when valid)',get:num('recovered')},{label:'schema rejected',get:num('schemaRejected')},{label:'scoring errors',get:num('scoringErrors')}];
sortable(tb,D.quality,qcols,function(q){var tr=el('tr');qcols.forEach(function(c){var v=c.text?c.text(q):c.get(q);var bad=typeof v==='number'&&v>0&&['repeated ids','not answered','not in benchmark'].indexOf(c.label)>=0;tr.appendChild(el('td',{class:(c.left?'l':'')+(bad?' warn':''),text:v==null?'-':String(v)}));});return tr;});
dq.appendChild(el('div',{class:'card'},[tb]));})();

// Figure 2: JSON Pass vs Value Accuracy
var fig=section('fig','JSON Pass vs Value Accuracy','Each point a model on one source: valid JSON is not the same as right values.');
// The plot area is [P, R] x [T, H-P]; the axis titles sit outside the tick labels and the legend
// right of the plot, so no text lies over another; the legend lists only the sources present.
(function(){var W=760,H=430,P=56,T=30,R=W-110,svg='<svg id="scatter" width="'+W+'" height="'+H+'" role="img" aria-label="JSON Pass versus Value Accuracy">';var colors={text:'#2563eb',image:'#d97706',audio:'#059669'};
var X=function(v){return P+(R-P)*v;},Y=function(v){return H-P-(H-P-T)*v;};
svg+='<line x1="'+P+'" y1="'+(H-P)+'" x2="'+R+'" y2="'+(H-P)+'" stroke="#999"/><line x1="'+P+'" y1="'+T+'" x2="'+P+'" y2="'+(H-P)+'" stroke="#999"/>';
for(var g=0;g<=10;g+=2){svg+='<text class="tick" x="'+(X(g/10)-8)+'" y="'+(H-P+16)+'">'+(g/10).toFixed(1)+'</text><text class="tick" x="'+(P-30)+'" y="'+(Y(g/10)+4)+'">'+(g/10).toFixed(1)+'</text>';}
svg+='<text class="axis-title" x="'+((P+R)/2-48)+'" y="'+(H-12)+'">JSON Pass Rate</text><text class="axis-title" x="'+(P-30)+'" y="14">Value Accuracy</text>';
var present=SOURCES.filter(function(s){return (own(D.perSource,s)||[]).length>0;});
present.forEach(function(s,si){(own(D.perSource,s)||[]).forEach(function(r){var jp=own(r.weighted,'schema_compliance')||0,va=own(r.weighted,'leaf_value_em')||0;svg+='<circle cx="'+X(jp).toFixed(1)+'" cy="'+Y(va).toFixed(1)+'" r="4" fill="'+colors[s]+'" fill-opacity="0.75"><title>'+esc(nameOf(r.m))+' ('+s+'): JSON Pass '+f3(jp)+', Value Accuracy '+f3(va)+'</title></circle>';});svg+='<g class="legend-item" data-source="'+s+'"><circle cx="'+(R+24)+'" cy="'+(T+6+si*18)+'" r="4" fill="'+colors[s]+'"/><text x="'+(R+34)+'" y="'+(T+10+si*18)+'">'+s+'</text></g>';});
svg+='</svg>';fig.appendChild(el('div',{class:'card',html:svg}));})();

// Rank shifts between sources
var rk=section('ranks','Rank shifts','Each line a model: its Value Accuracy rank on each source.');
(function(){var present=SOURCES.filter(function(s){return ranks.has(s);});if(present.length<2){rk.appendChild(el('p',{class:'muted',text:'Needs two or more sources.'}));return;}
var n=D.models.length,W=720,H=Math.max(200,n*16+40),svg='<svg width="'+W+'" height="'+H+'" role="img" aria-label="Rank shifts">';var xs=present.map(function(_,i){return 170+i*(W-340)/(present.length-1);});
present.forEach(function(s,i){svg+='<text x="'+(xs[i]-14)+'" y="14">'+s+'</text>';});
D.models.forEach(function(_,mi){var pts=[];present.forEach(function(s,i){var r=ranks.get(s).get(mi);if(r)pts.push([xs[i],20+r*16]);});if(pts.length<2)return;var d='M'+pts.map(function(p){return p[0].toFixed(1)+' '+p[1];}).join(' L');svg+='<path d="'+d+'" fill="none" stroke="#64748b" stroke-opacity="0.6"><title>'+esc(nameOf(mi))+'</title></path>';var f=pts[0],l=pts[pts.length-1];svg+='<text x="'+(f[0]-165)+'" y="'+(f[1]+4)+'">'+esc(nameOf(mi).slice(0,24))+'</text><text x="'+(l[0]+6)+'" y="'+(l[1]+4)+'">'+esc(nameOf(mi).slice(0,24))+'</text>';});
svg+='</svg>';rk.appendChild(el('div',{class:'card',html:svg}));})();

// Error taxonomy
var tx=section('tax','Error taxonomy','Each record in the first class that fits: parse failure, schema violation (the hardening gate), coverage gate (the path-set F1, paths missing or extra, under the gate that took Value Accuracy down: text to 0), missing paths (the gate did not fire), type mismatch, value error, correct.');
(function(){var tb=el('table',{id:'taxonomy'});
var tcols=[{label:'Model',left:true,get:function(x){return nameOf(x[0]);}},{label:'Source',left:true,get:function(x){return x[1];}},{label:'n',get:function(x){return x[2].n;}}]
  .concat(D.classes.map(function(c){return {label:c.replace('_',' '),get:function(x){return x[2].classes[c].count;},cell:function(x){var k=x[2].classes[c];return el('td',{text:k.count+' ('+(100*k.rate).toFixed(0)+'%)',title:'e.g. '+k.examples.join(', ')});}};}))
  .concat([{label:'most-missed paths',left:true,cell:function(x){return el('td',{class:'paths'},x[2].topMissingPaths.slice(0,3).map(function(m){return el('div',null,[el('code',{text:m.path}),' x'+m.count]);}));}}]);
var rowsT=D.taxonomy.slice().sort(function(a,b){return nameOf(a[0])<nameOf(b[0])?-1:nameOf(a[0])>nameOf(b[0])?1:a[1]<b[1]?-1:1;});
sortable(tb,rowsT,tcols,function(x){var tr=el('tr');tcols.forEach(function(c){tr.appendChild(c.cell?c.cell(x):el('td',{class:c.left?'l':'',text:String(c.get(x))}));});return tr;});
tx.appendChild(el('div',{class:'card'},[tb]));})();

// Pairwise comparison
var cp=section('cmp','Pairwise comparison',D.matrix?('Value Accuracy on '+D.matrix.source+', column minus row, paired bootstrap; * = p < 0.05 after Holm-Bonferroni correction.'):'Needs two or more models on one source.');
if(D.matrix){var m=D.matrix,tb=el('table',{id:'pairwise'});
  tb.appendChild(el('thead',null,[el('tr',null,[el('th',{text:''})].concat(m.models.map(function(x,j){return el('th',{text:x,title:x});})))]));
  var body=el('tbody');
  var nc=new Set(m.noCommon.map(function(p){return p[0]+','+p[1];}));
  m.models.forEach(function(row,i){var tr=el('tr',null,[el('td',{text:row})]);m.models.forEach(function(_,j){var c=m.diff[i][j];
    if(!c&&(nc.has(i+','+j)||nc.has(j+','+i))){tr.appendChild(el('td',{class:'nc',text:'n/c',title:'no common records'}));return;}
    tr.appendChild(el('td',{text:c?((c[0]>=0?'+':'')+c[0].toFixed(3)+(c[1]<0.05?'*':'')):'-',style:c?('color:'+(c[0]>0?'#18794e':c[0]<0?'#c4320a':'#555')):''}));});body.appendChild(tr);});
  tb.appendChild(body);var card=el('div',{class:'card'},[tb]);
  if(m.noCommon.length)card.appendChild(el('p',{class:'muted',id:'no-common',text:'n/c = no common records, left out of the matrix and of the Holm-Bonferroni correction: '+m.noCommon.map(function(p){return m.models[p[0]]+' / '+m.models[p[1]];}).join(', ')}));
  cp.appendChild(card);}

// Drill-down
var dr=section('drill','Records','Filter, then click a record for its context, question, schema and the leaf-by-leaf diff of ground truth against the answer.');if(SMP)dr.appendChild(el('p',{class:'note',id:'drill-sampling',text:samplingText()}));
function options(id,all,list){return el('select',{id:id},[el('option',{value:'',text:all})].concat(list.map(function(o){return el('option',{value:o[0],text:o[1]});})));}
var fModel=options('f-model','all models',D.models.map(function(m,i){return [m,nameOf(i)];}));
var fSource=options('f-source','all sources',SOURCES.map(function(s){return [s,s];}));
var cx=new Set(),cats=new Set();D.records.forEach(function(r){cx.add(r.complexity);if(r.category!==undefined)cats.add(r.category);});
var ORDER=['easy','medium','hard'];
var fCx=options('f-complexity','all complexities',Array.from(cx).sort(function(a,b){var i=ORDER.indexOf(a),j=ORDER.indexOf(b);return (i<0?9:i)-(j<0?9:j)||(a<b?-1:1);}).map(function(c){return [c,c];}));
var fCat=cats.size?options('f-source-category','all source categories',Array.from(cats).sort().map(function(c){return [c,c];})):null;
var fOut=options('f-outcome','all outcomes',D.classes.map(function(c,i){return [String(i),c.replace('_',' ')];}));
var fText=el('input',{id:'f-text',placeholder:'record id contains…'});
var count=el('span',{class:'muted',id:'f-count'});
dr.appendChild(el('div',{class:'filters card'},['Model',fModel,'Source',fSource,el('span',{title:'schema complexity: easy = an object of scalars, medium = nested objects or arrays of scalars, hard = arrays of objects or depth >= 3',text:'Schema complexity'}),fCx].concat(fCat?[el('span',{title:"the benchmark's source category (metadata.source_category)",text:'Source category'}),fCat]:[]).concat(['Outcome',fOut,fText,count])));
/** The record list's columns; a click on a header sorts the filtered records by it. */
var RCOLS=[{label:'Record',left:true,get:function(x){return D.records[x[2][0]].id;}},{label:'Model',left:true,get:function(x){return nameOf(x[0]);}},{label:'Source',left:true,get:function(x){return x[1];}},{label:'Schema complexity',left:true,get:function(x){var c=D.records[x[2][0]].complexity,i=ORDER.indexOf(c);return i<0?9:i;},text:function(x){return D.records[x[2][0]].complexity;}}]
  .concat(fCat?[{label:'Source category',left:true,get:function(x){return D.records[x[2][0]].category;}}]:[])
  .concat([{label:'Val.Acc.',get:function(x){return x[2][1];}},{label:'Faithful.',get:function(x){return x[2][2];}},{label:'JSON Pass',get:function(x){return x[2][3];}}]).concat(lenientRecordCols()).concat([{label:'Outcome',left:true,get:function(x){return x[2][8];},text:function(x){return D.classes[x[2][8]].replace('_',' ');}}]);
var list=el('table',{id:'records'});var lbody=el('tbody');var sortKey=null,sortDir=-1;var rths=[];
list.appendChild(el('thead',null,[el('tr',null,RCOLS.map(function(c,i){var th=el('th',{class:(c.left?'l ':'')+'sort',title:'click to sort',text:c.label});
  th.addEventListener('click',function(){if(sortKey===i)sortDir=-sortDir;else{sortKey=i;sortDir=c.left?1:-1;}rths.forEach(function(h){h.removeAttribute('aria-sort');});th.setAttribute('aria-sort',sortDir>0?'ascending':'descending');sortCurrent();page=0;drawList();});
  rths.push(th);return th;}))]));list.appendChild(lbody);
var pager=el('div');var detail=el('div',{id:'detail'});
dr.appendChild(detail);dr.appendChild(el('div',{class:'card'},[list,pager]));
var PAGE=50,page=0,current=[];
function filtered(){var out=[],mq=fModel.value,sq=fSource.value,xq=fCx.value,cq=fCat?fCat.value:'',oq=fOut.value,tq=fText.value.trim().toLowerCase();
  D.rows.forEach(function(x){var mi=x[0],s=x[1];if(mq&&D.models[mi]!==mq)return;if(sq&&s!==sq)return;
    x[2].forEach(function(row){var rec=D.records[row[0]];if(xq&&rec.complexity!==xq)return;if(cq&&rec.category!==cq)return;if(oq&&String(row[8])!==oq)return;if(tq&&rec.id.toLowerCase().indexOf(tq)<0)return;out.push([mi,s,row]);});});
  return out;}
function sortCurrent(){if(sortKey===null)return;var c=RCOLS[sortKey];current.sort(function(a,b){var x=c.get(a),y=c.get(b);if(x===y)return 0;if(x==null)return 1;if(y==null)return -1;return (x<y?-1:1)*sortDir;});}
function drawList(){lbody.textContent='';var start=page*PAGE;
  current.slice(start,start+PAGE).forEach(function(x){var rec=D.records[x[2][0]];
    var tr=el('tr',{class:'rec','data-record':rec.id,'data-model':D.models[x[0]],onclick:function(){show(x);}});
    RCOLS.forEach(function(c,i){var v=c.text?c.text(x):c.get(x);tr.appendChild(el('td',{class:c.left?'l':'',text:i===0?String(v).slice(0,24):typeof v==='number'?f3(v):v==null?'-':String(v),title:i===0?rec.id:''}));});
    lbody.appendChild(tr);});
  pager.textContent='';var pages=Math.max(1,Math.ceil(current.length/PAGE));
  pager.appendChild(el('button',{text:'‹ prev',onclick:function(){if(page>0){page--;drawList();}}}));pager.appendChild(el('span',{class:'muted',text:' page '+(page+1)+' of '+pages+' '}));pager.appendChild(el('button',{text:'next ›',onclick:function(){if(page<pages-1){page++;drawList();}}}));}
function refresh(){current=filtered();sortCurrent();page=0;count.textContent=current.length+' records';drawList();}
[fModel,fSource,fCx,fOut].concat(fCat?[fCat]:[]).forEach(function(s){s.addEventListener('change',refresh);});fText.addEventListener('input',refresh);
function expandDiff(d,rec){if(d.full)return d.full;return d.map(function(e,i){var g=rec.leaves[i];if(e===0)return [g[0],0,g[1],g[1],1];if(e===2)return [g[0],2,g[1],'',0];if(e[0]===3)return [e[1],3,'',e[2],0];return [g[0],e[0],g[1],e[1],e[2]];});}
function show(x){var row=x[2],rec=D.records[row[0]],key=x[0]+'|'+row[0],d=own(D.diffs,key);detail.textContent='';var c=el('div',{class:'card',id:'record-detail'});
  c.appendChild(el('h3',null,[rec.id,el('span',{class:'pill',text:nameOf(x[0])}),el('span',{class:'pill',text:x[1]}),el('span',{class:'pill',title:'schema complexity',text:rec.complexity}),rec.category!==undefined?el('span',{class:'pill',title:'source category',text:rec.category}):null]));
  c.appendChild(el('p',null,['Value Accuracy '+f3(row[1])+' · Faithfulness '+f3(row[2])+' · JSON Pass '+f3(row[3])+' · Path Recall '+f3(row[4])+' · Structure '+f3(row[5])+' · Type Safety '+f3(row[6])+' · Perfect '+f3(row[7])]));
  lenientRecordLine(c,x);
  // The page itself (the record's image attachment, size-bounded), beside the answers.
  if(rec.page!==undefined&&D.pages&&D.pages[rec.page]){var pg=D.pages[rec.page];
    c.appendChild(el('figure',{id:'record-page','data-path':pg.path},[pg.src?el('img',{src:pg.src,alt:'the page: '+pg.path}):null,el('figcaption',{class:'muted',text:pg.path+(pg.note?' · '+pg.note:'')})]));}
  if(row[9])c.appendChild(el('p',{class:'muted',id:'why',text:'Why: '+row[9]}));
  var quirks=row[10]||[];var qpaths=new Map();
  if(quirks.length){var ql=el('ul',{id:'quirks'});quirks.forEach(function(q){qpaths.set(q[0],q);ql.appendChild(el('li',null,["the sob profile's quirk decided this leaf: ",el('code',{text:q[0]}),' ('+q[1]+(q[2]?': '+q[2]:'')+')']));});c.appendChild(ql);}
  if(row[11])c.appendChild(SOB_COMPLIANCE.violations(row[11],el));
  if(rec.question!==undefined){
    c.appendChild(el('p',null,[el('b',{text:'Question: '}),clipped('span','question',rec.question,rec.qlen,SHOWN.question)]));
    c.appendChild(el('details',{id:'context-box'},[el('summary',{text:'Context'}),clipped('pre','context',rec.context,rec.clen,SHOWN.context)]));
    c.appendChild(el('details',null,[el('summary',{text:'Schema'}),clipped('pre','schema',rec.schema,rec.slen,SHOWN.schema)]));}
  // The exact prompt this model was sent (its run's template, rendered as the runner rendered it)
  var pr=own(D.prompts||{},key);
  if(pr){var ps=D.promptTexts[pr[0]],pu=D.promptTexts[pr[1]];var cutNote=function(t){return t[1]?' [the report keeps the first '+t[0].length+' of '+t[1]+' characters]':'';};
    c.appendChild(el('details',{id:'prompt-box'},[el('summary',{text:'Prompt sent (exact)'})].concat(ps[0]?[el('div',{class:'muted',text:'system'+cutNote(ps)}),el('pre',{id:'prompt-system',text:ps[0]})]:[]).concat([el('div',{class:'muted',text:'user'+cutNote(pu)}),el('pre',{id:'prompt-user',text:pu[0]})])));}
  else c.appendChild(el('p',{class:'muted',id:'prompt-box',text:'Prompt sent: not known (the answers are not in a run directory with its manifest).'}));
  if(!d){c.appendChild(el('p',{class:'muted',text:D.diffsOmitted>0?('This diff is not embedded: the report keeps at most '+D.maxDiffLeaves+' leaves, wrong answers first ('+D.diffsOmitted+' diffs left out; raise --max-diff-leaves or report fewer models).'):'No response file was given for this model, so there is no leaf diff (scores only).'}));}
  else if(d.raw===undefined){var gt=own(D.gates,key);if(gt){var fired=row[3]===0?'schema hardening: the answer fails its schema (JSON Pass 0), so every value and structure metric is multiplied by 0':gt[1]<1?('coverage gate x'+gt[1].toFixed(3)+' on Value Accuracy and Faithfulness (path-set F1 '+gt[0].toFixed(3)+(x[1]==='text'?' < 0.95':', gate = min(1, (F1/0.9)^2)')+')'):'none (JSON Pass 1, path-set F1 '+gt[0].toFixed(3)+', coverage gate 1)';c.appendChild(el('p',{id:'gate'},[el('b',{text:'Gate that fired: '}),fired]));}}
  if(!d){}else if(d.raw!==undefined){c.appendChild(el('p',null,[el('b',{text:'The answer is not a JSON object or array: '}),el('pre',{text:d.raw})]));}
  else{var tb=el('table',{class:'diff',id:'diff'});tb.appendChild(el('thead',null,[el('tr',null,['path','status','ground truth','answer','token F1'].map(function(h){return el('th',{class:'l',text:h});}))]));var body=el('tbody');
    expandDiff(d,rec).forEach(function(l){var q=qpaths.get(l[0]);body.appendChild(el('tr',{class:'s'+l[1],'data-path':l[0],'data-status':String(l[1])},[el('td',{class:'l'},[l[0],q?el('span',{class:'quirk',title:"the sob profile's quirk decided this leaf: "+q[1]+(q[2]?': '+q[2]:''),text:' ⚑'}):null]),el('td',{class:'l',text:STATUS[l[1]]}),el('td',{class:'l',text:l[2]}),el('td',{class:'l',text:l[3]}),el('td',{text:l[1]===3?'':l[4].toFixed(3)})]));});
    tb.appendChild(body);lenientDiffColumn(tb,x,rec);c.appendChild(tb);}
  sideBySide(c,x,rec);
  detail.appendChild(c);c.scrollIntoView({block:'start'});}
/** The answers of this record from this model and one other chosen model, leaf by leaf, side by side. */
function sideBySide(c,x,rec){var ri=x[2][0];var others=D.models.map(function(_,mi){return mi;}).filter(function(mi){return mi!==x[0]&&own(D.diffs,mi+'|'+ri);});
  if(!others.length||!own(D.diffs,x[0]+'|'+ri))return;
  var sel=el('select',{id:'compare-with'},[el('option',{value:'',text:'choose a model'})].concat(others.map(function(mi){return el('option',{value:String(mi),text:nameOf(mi)});})));
  var box=el('div',{id:'side-by-side'});
  c.appendChild(el('div',{class:'filters'},['Side by side with ',sel]));c.appendChild(box);
  function leaves(mi){var d=own(D.diffs,mi+'|'+ri);var m=new Map();if(d.raw!==undefined)return {raw:d.raw,m:m};expandDiff(d,rec).forEach(function(l){m.set(l[0],l);});return {m:m};}
  sel.addEventListener('change',function(){box.textContent='';if(sel.value==='')return;var mb=Number(sel.value);var A=leaves(x[0]),B=leaves(mb);
    var paths=[];var seen=new Set();[A.m,B.m].forEach(function(m){m.forEach(function(_,p){if(!seen.has(p)){seen.add(p);paths.push(p);}});});
    var tb=el('table',{class:'diff',id:'side-table'});tb.appendChild(el('thead',null,[el('tr',null,['path','ground truth',nameOf(x[0]),nameOf(mb)].map(function(h){return el('th',{class:'l',text:h});}))]));var body=el('tbody');
    var cell=function(S,p){if(S.raw!==undefined)return el('td',{class:'l s1',text:'(not JSON) '+S.raw.slice(0,80)});var l=S.m.get(p);if(!l)return el('td',{class:'l s2',text:'(no such leaf)'});return el('td',{class:'l s'+l[1],title:STATUS[l[1]],text:l[1]===2?'(missing)':l[3]});};
    paths.forEach(function(p){var g=(A.m.get(p)||B.m.get(p));body.appendChild(el('tr',{'data-path':p},[el('td',{class:'l',text:p}),el('td',{class:'l',text:g&&g[1]!==3?g[2]:''}),cell(A,p),cell(B,p)]));});
    tb.appendChild(body);box.appendChild(tb);});}
refresh();
if(D.compliance)SOB_COMPLIANCE.render(D,app,H);
${LENIENT_CLIENT}
})();
`;
