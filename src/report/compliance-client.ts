/**
 * The report page's schema compliance section (inlined into report.html before the main script;
 * no network). `SOB_COMPLIANCE.render` draws it from `D.compliance` (src/report/compliance.ts):
 * the per-model summary with 95% intervals, JSONSchemaBench's per-dataset tables, per-dataset
 * coverage bars, the commonest violation keywords and a record list whose record view lists
 * every violation (instance path, keyword, schema path, message). `SOB_COMPLIANCE.violations`
 * draws the same list in the main record view for rows of the strict profile. Models and
 * datasets are referred to by index: names are never object keys.
 */

export const COMPLIANCE_CSS = `
.cbar-legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px;vertical-align:middle}
table.viol td{white-space:normal;word-break:break-word;max-width:420px}table.viol code{font-size:12px}
table.ctable th,table.ctable td{padding:3px 5px;font-size:12px}table.ctable th{white-space:normal;vertical-align:bottom}
#compliance-keywords th{white-space:normal;vertical-align:bottom}.o0{color:#18794e}.o1,.o2,.o5{color:#c4320a}.o3,.o4{color:#9a6700}
`;

export const COMPLIANCE_CLIENT = `
var SOB_COMPLIANCE=(function(){
'use strict';
function f3(x){return typeof x==='number'?x.toFixed(3):'-';}
function ms(x){return typeof x==='number'?(Math.abs(x)>=100?x.toFixed(0):x.toFixed(1)):'-';}
function esc(s){return String(s).replace(/[&<>"]/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
var RATES=[['declared_coverage','Declared coverage','the provider accepted the schema (not schema_rejected) / all records'],['empirical_coverage','Empirical coverage','the answer parses and validates / all records'],['compliance','Compliance','valid / declared']];
var TIMINGS=[['ttft_ms','TTFT'],['tpot_ms','TPOT'],['latency_ms','Total']];

var OUTCOMES=['valid','invalid','not JSON','refused','schema does not compile','scoring error'];
/** A violation list: v = [partial validity, violation count, [[instance path, schema path, keyword, message]...], outcome]. */
function violations(v,el){
  var box=el('div',{class:'violations',id:'violations'});var n=v[1],list=v[2],o=v[3];
  var head=o===0?'valid (no violation)':o===1?(n+' violation'+(n===1?'':'s')):OUTCOMES[o];
  box.appendChild(el('p',null,[el('b',{text:'Schema compliance: '}),el('span',{id:'c-verdict',class:'o'+o,text:head}),' · partial validity '+f3(v[0])]));
  if(list.length){var tb=el('table',{class:'viol',id:'violation-list'});
    tb.appendChild(el('thead',null,[el('tr',null,['instance path','keyword','schema path','message'].map(function(x){return el('th',{class:'l',text:x});}))]));
    var body=el('tbody');list.forEach(function(x){body.appendChild(el('tr',{'data-keyword':x[2]},[el('td',{class:'l'},[el('code',{text:x[0]===''?'(root)':x[0]})]),el('td',{class:'l',text:x[2]}),el('td',{class:'l'},[el('code',{text:x[1]})]),el('td',{class:'l',text:x[3]})]));});
    tb.appendChild(body);box.appendChild(tb);}
  if(n>list.length)box.appendChild(el('p',{class:'muted',text:'listed: '+list.length+' of '+n+' (rows keep the first 100; the report embeds at most its violation budget)'}));
  return box;
}

function render(D,app,h){
  var C=D.compliance,el=h.el;
  var sec=h.section('compliance','Schema compliance','JSONSchemaBench and SchemaBench on the schema records: declared coverage, empirical coverage and compliance per dataset (metadata.source_category), with 95% bootstrap intervals; partial validity = the share of the schema\\'s applicable constraints the answer meets.');
  if(C.skipped&&C.skipped.length){var nb=el('div',{class:'card notice',id:'compliance-skipped'},[el('b',{text:'Left out of this section'})]);var ul=el('ul');C.skipped.forEach(function(s){ul.appendChild(el('li',null,[el('code',{text:s.folder}),': '+s.reason]));});nb.appendChild(ul);sec.appendChild(nb);}
  if(C.empty)return;
  if(!D.leaderboard.length)sec.insertBefore(el('p',{class:'muted',text:C.models.length+' models, '+C.records.length+' schema records; generated '+D.generated+' from '+D.where}),sec.children[1]);
  var S=C.summaries,name=function(mi){return C.names[mi];};
  // The validation protocol each model's schemas were read under (docs/compliance-protocols.md).
  var protos=[];S.forEach(function(s){var p=s.protocol||'dialect (summary without a protocol)';if(protos.indexOf(p)<0)protos.push(p);});
  var whys=[];S.forEach(function(s){if(s.protocolReason&&whys.indexOf(s.protocolReason)<0)whys.push(s.protocolReason);});
  if(S.length)sec.appendChild(el('p',{id:'compliance-protocol',class:protos.length>1?'notice':'muted',text:protos.length>1?'Validation protocols differ between models ('+protos.join(', ')+'): their rates are not comparable.':'Validation protocol: '+protos[0]+(whys.length===1?' ('+whys[0]+')':'')+'.'}));
  // Schemas with a format no value can satisfy under the protocol (the harness's ipv4, ipv6, uuid): one warning each.
  var never=[];S.forEach(function(s){(s.unsatisfiable||[]).forEach(function(u){if(!never.some(function(x){return x.record_id===u.record_id;}))never.push({record_id:u.record_id,formats:u.formats,protocol:s.protocol});});});
  if(never.length){var nw=el('div',{class:'card notice',id:'compliance-unsatisfiable'},[el('b',{text:never.length+' schema'+(never.length===1?'':'s')+' with a format no value can satisfy under the protocol'}),el('span',{text:' (the harness\\'s ipv4, ipv6 and uuid checks return None; --protocol dialect checks them as written)'})]);var nu=el('ul');never.slice(0,50).forEach(function(u){nu.appendChild(el('li',null,[el('code',{text:u.record_id}),': '+u.formats.join(', ')+' ('+u.protocol+')']));});if(never.length>50)nu.appendChild(el('li',{text:'... and '+(never.length-50)+' more'}));nw.appendChild(nu);sec.appendChild(nw);}
  function q(s,k){for(var i=0;i<s.quality.length;i++)if(s.quality[i][0]===k)return s.quality[i][1];return null;}
  function rateCell(r){return el('td',null,[r.of?f3(r.rate):'-',r.ci95?el('span',{class:'ci',text:'['+r.ci95[0].toFixed(3)+', '+r.ci95[1].toFixed(3)+']'}):null,el('span',{class:'ci',text:r.count+'/'+r.of})]);}
  var timed=TIMINGS.filter(function(t){return S.some(function(s){return s.overall.efficiency[t[0]].n>0;});});

  // Per model, overall
  var tb=el('table',{id:'compliance-summary'});
  var cols=[{label:'Model',left:true,get:function(s){return name(s.m);}},{label:'n',get:function(s){return s.records;}}]
    .concat(RATES.map(function(r){return {label:r[1],title:r[2]+'; click to sort',get:function(s){return s.overall[r[0]].rate;},cell:function(s){return rateCell(s.overall[r[0]]);}};}))
    .concat([{label:'Partial validity',title:'mean share of the applicable constraints met',get:function(s){return s.overall.partial_validity.mean;},cell:function(s){return el('td',{text:f3(s.overall.partial_validity.mean)});}}])
    .concat(timed.map(function(t){return {label:t[1]+' median / p90 (ms)',get:function(s){return s.overall.efficiency[t[0]].median;},cell:function(s){var e=s.overall.efficiency[t[0]];return el('td',{text:e.n?ms(e.median)+' / '+ms(e.p90):'-'});}};}))
    .concat([{label:'not JSON',title:'declared records whose answer does not parse',get:function(s){return q(s,'json_parse_fail_count');}},{label:'refused',title:'schemas the provider refused (schema_rejected)',get:function(s){return q(s,'schema_rejected_count');}},{label:'uncompilable',title:'schemas our validator cannot compile (no answer to them can be shown valid)',get:function(s){return q(s,'uncompilable_schema_count');}}]);
  h.sortable(tb,S,cols,function(s){var tr=el('tr',{'data-model':C.models[s.m]});cols.forEach(function(c){var v=c.get(s);tr.appendChild(c.cell?c.cell(s):el('td',{class:c.left?'l':'',text:typeof v==='number'&&!Number.isInteger(v)?f3(v):v==null?'-':String(v)}));});return tr;});
  sec.appendChild(el('div',{class:'card'},[tb]));

  // Cost and speed of each model's answers (eval_info), where its response file was found
  if(S.some(function(s){return s.usage;})){
    var U=function(s){return s.usage||{latency_ms:{},ttft_ms:{}};},num=function(v,f){return typeof v==='number'?f(v):'-';},round=function(v){return String(Math.round(v));};
    var pp=function(p){return p&&typeof p.p50==='number'?round(p.p50)+' / '+round(p.p95):'-';};
    var ut=el('table',{id:'compliance-usage'});
    var ucols=[{label:'Model',left:true,get:function(s){return name(s.m);}},{label:'Answers',get:function(s){return U(s).answers;},text:function(s){return num(U(s).answers,String);}},
      {label:'Tokens in',get:function(s){return U(s).input_tokens;},text:function(s){return num(U(s).input_tokens,round);}},
      {label:'Tokens out',get:function(s){return U(s).output_tokens;},text:function(s){return num(U(s).output_tokens,round);}},
      {label:'Cost',title:'total cost where the provider priced the answers',get:function(s){return U(s).cost;},text:function(s){return num(U(s).cost,function(v){return '$'+v.toFixed(v<1?4:2);});}},
      {label:'Latency p50 / p95 ms',get:function(s){return U(s).latency_ms.p50;},text:function(s){return pp(U(s).latency_ms);}},
      {label:'TTFT p50 / p95 ms',title:'time to first token (streamed answers)',get:function(s){return U(s).ttft_ms.p50;},text:function(s){return pp(U(s).ttft_ms);}}];
    h.sortable(ut,S,ucols,function(s){var tr=el('tr',{'data-model':C.models[s.m]});ucols.forEach(function(c){tr.appendChild(el('td',{class:c.left?'l':'',text:c.text?c.text(s):String(c.get(s))}));});return tr;});
    sec.appendChild(el('h3',{text:'Cost and speed'}));sec.appendChild(el('p',{class:'muted',text:"Totals over each model's answers (cost where the provider priced them); latency and time to first token: 50th / 95th percentiles."}));sec.appendChild(el('div',{class:'card'},[ut]));}

  // JSONSchemaBench's table: datasets as columns, one table per rate
  RATES.forEach(function(r){
    var t=el('table',{id:'compliance-'+r[0],class:'ctable'});
    t.appendChild(el('thead',null,[el('tr',null,[el('th',{class:'l',text:'Model'})].concat(C.datasets.map(function(d){return el('th',{text:d});})).concat([el('th',{text:'Overall'})]))]));
    var body=el('tbody');S.forEach(function(s){var by=new Map(s.datasets);body.appendChild(el('tr',{'data-model':C.models[s.m]},[el('td',{class:'l',text:name(s.m)})].concat(C.datasets.map(function(_,di){var g=by.get(di);return g?rateCell(g[r[0]]):el('td',{text:'-'});})).concat([rateCell(s.overall[r[0]])])));});
    t.appendChild(body);sec.appendChild(el('h3',{text:r[1]+' per dataset'}));sec.appendChild(el('p',{class:'muted',text:r[2]+'; 95% interval and counts under each rate.'}));sec.appendChild(el('div',{class:'card'},[t]));});

  // Coverage bars per dataset: declared (light) behind empirical (dark)
  (function(){var groups=[['overall',-1]].concat(C.datasets.map(function(d,i){return [d,i];}));var W=780,L=230,BW=460,bh=13,gh=18,y=40;
    var svg='';groups.forEach(function(g){svg+='<text class="chart-title" x="0" y="'+(y+12)+'">'+esc(g[0])+'</text>';y+=gh;
      S.forEach(function(s){var grp=g[1]<0?s.overall:(new Map(s.datasets)).get(g[1]);if(!grp)return;var d=grp.declared_coverage.rate,e=grp.empirical_coverage.rate;
        svg+='<g data-dataset="'+esc(g[0])+'" data-model="'+esc(C.models[s.m])+'"><text x="12" y="'+(y+10)+'">'+esc(name(s.m).slice(0,30))+'</text><rect class="declared" x="'+L+'" y="'+y+'" width="'+(d*BW).toFixed(1)+'" height="'+(bh-2)+'" fill="#bfdbfe"><title>'+esc(name(s.m))+', '+esc(g[0])+': declared coverage '+f3(d)+'</title></rect><rect class="empirical" x="'+L+'" y="'+(y+2)+'" width="'+(e*BW).toFixed(1)+'" height="'+(bh-6)+'" fill="#1d4ed8"><title>'+esc(name(s.m))+', '+esc(g[0])+': empirical coverage '+f3(e)+'</title></rect><text x="'+(L+BW+8)+'" y="'+(y+10)+'">'+f3(e)+' / '+f3(d)+'</text></g>';y+=bh;});y+=8;});
    var ax=y;svg+='<line x1="'+L+'" y1="'+ax+'" x2="'+(L+BW)+'" y2="'+ax+'" stroke="#999"/>';for(var k=0;k<=10;k+=2)svg+='<text x="'+(L+BW*k/10-8)+'" y="'+(ax+14)+'">'+(k/10).toFixed(1)+'</text>';
    svg='<svg id="coverage-bars" width="'+W+'" height="'+(ax+24)+'" role="img" aria-label="Declared and empirical coverage by dataset and model"><text class="chart-title" x="0" y="14">Coverage by dataset: empirical (dark) over declared (light); the numbers read empirical / declared</text>'+svg+'</svg>';
    sec.appendChild(el('h3',{text:'Coverage by dataset'}));sec.appendChild(el('div',{class:'card'},[el('div',{html:svg})]));})();

  // The commonest violation keywords: records with at least one violation of each, per model
  (function(){var tot=new Map();S.forEach(function(s){s.overall.violation_keywords.forEach(function(k){tot.set(k.keyword,(tot.get(k.keyword)||0)+k.records);});});
    var kws=Array.from(tot.keys()).sort(function(a,b){return tot.get(b)-tot.get(a)||(a<b?-1:1);}).slice(0,15);
    sec.appendChild(el('h3',{text:'Most common violation keywords'}));
    if(!kws.length){sec.appendChild(el('p',{class:'muted',id:'compliance-keywords',text:'No violation in any answer.'}));return;}
    var t=el('table',{id:'compliance-keywords'});t.appendChild(el('thead',null,[el('tr',null,[el('th',{class:'l',text:'Keyword'}),el('th',{text:'all models'})].concat(S.map(function(s){return el('th',{text:name(s.m),title:C.models[s.m]});})))]));
    var body=el('tbody');kws.forEach(function(k){body.appendChild(el('tr',{'data-keyword':k},[el('td',{class:'l'},[el('code',{text:k})]),el('td',{text:String(tot.get(k))})].concat(S.map(function(s){var n=0;s.overall.violation_keywords.forEach(function(x){if(x.keyword===k)n=x.records;});var pct=100*n/Math.max(1,s.overall.n);return el('td',{text:n?n+' ('+pct.toFixed(pct<10?1:0)+'%)':'-'});}))));});
    t.appendChild(body);sec.appendChild(el('p',{class:'muted',text:'Records whose answer breaks the keyword at least once (share of the model\\'s records).'}));sec.appendChild(el('div',{class:'card'},[t]));})();

  // Records: filter, then click for the record view with every violation
  sec.appendChild(el('h3',{text:'Schema records'}));
  function options(id,all,list){return el('select',{id:id},[el('option',{value:'',text:all})].concat(list.map(function(o){return el('option',{value:o[0],text:o[1]});})));}
  var fm=options('c-model','all models',C.models.map(function(m,i){return [String(i),name(i)];}));
  var fd=options('c-dataset','all datasets',C.datasets.map(function(d,i){return [String(i),d];}));
  var fo=options('c-outcome','all outcomes',C.outcomes.map(function(o,i){return [String(i),o];}));
  var ft=el('input',{id:'c-text',placeholder:'record id contains…'});var cnt=el('span',{class:'muted',id:'c-count'});
  sec.appendChild(el('div',{class:'filters card'},['Model',fm,'Dataset',fd,'Outcome',fo,ft,cnt]));
  var detail=el('div',{id:'c-detail'});sec.appendChild(detail);
  var list=el('table',{id:'c-records'});list.appendChild(el('thead',null,[el('tr',null,['Record','Model','Dataset','Outcome','Partial validity','Violations'].map(function(x,i){return el('th',{class:i<4?'l':'',text:x});}))]));
  var lb=el('tbody');list.appendChild(lb);var pager=el('div');sec.appendChild(el('div',{class:'card'},[list,pager]));
  var PAGE=50,page=0,cur=[];
  function filtered(){var out=[];C.rows.forEach(function(x){var mi=x[0];if(fm.value&&String(mi)!==fm.value)return;x[1].forEach(function(r){var rec=C.records[r[0]];if(fd.value&&String(rec.d)!==fd.value)return;if(fo.value&&String(r[1])!==fo.value)return;if(ft.value&&rec.id.toLowerCase().indexOf(ft.value.trim().toLowerCase())<0)return;out.push([mi,r]);});});return out;}
  function draw(){lb.textContent='';cur.slice(page*PAGE,page*PAGE+PAGE).forEach(function(x){var r=x[1],rec=C.records[r[0]];
    lb.appendChild(el('tr',{class:'rec','data-record':rec.id,'data-model':C.models[x[0]],onclick:function(){show(x);}},[el('td',{class:'l',text:rec.id.slice(0,40),title:rec.id}),el('td',{class:'l',text:name(x[0])}),el('td',{class:'l',text:C.datasets[rec.d]}),el('td',{class:'l o'+r[1],text:C.outcomes[r[1]]}),el('td',{text:f3(r[2])}),el('td',{text:String(r[3])})]));});
    pager.textContent='';var pages=Math.max(1,Math.ceil(cur.length/PAGE));pager.appendChild(el('button',{text:'‹ prev',onclick:function(){if(page>0){page--;draw();}}}));pager.appendChild(el('span',{class:'muted',text:' page '+(page+1)+' of '+pages+' '}));pager.appendChild(el('button',{text:'next ›',onclick:function(){if(page<pages-1){page++;draw();}}}));}
  // Records that are not valid first (file order otherwise): what needs a look.
  function refresh(){cur=filtered();cur.sort(function(a,b){return (a[1][1]===0?1:0)-(b[1][1]===0?1:0);});page=0;cnt.textContent=cur.length+' records';draw();}
  [fm,fd,fo].forEach(function(s){s.addEventListener('change',refresh);});ft.addEventListener('input',refresh);
  function show(x){var r=x[1],rec=C.records[r[0]],mi=x[0];detail.textContent='';var c=el('div',{class:'card',id:'compliance-record'});
    c.appendChild(el('h3',null,[rec.id,el('span',{class:'pill',text:name(mi)}),el('span',{class:'pill',title:'dataset',text:C.datasets[rec.d]}),el('span',{class:'pill o'+r[1],id:'c-outcome-pill',text:C.outcomes[r[1]]})]));
    var tm=r[6];if(tm)c.appendChild(el('p',{class:'muted',id:'c-timing',text:TIMINGS.filter(function(t){return typeof tm[t[0]]==='number';}).map(function(t){return t[1]+' '+ms(tm[t[0]])+' ms';}).join(' · ')}));
    if(r[5])c.appendChild(el('p',{class:'muted',id:'c-why',text:'Why: '+r[5]}));
    c.appendChild(violations([r[2],r[3],r[4],r[1]],el));
    var a=Object.prototype.hasOwnProperty.call(C.answers,mi+'|'+r[0])?C.answers[mi+'|'+r[0]]:null;
    if(a)c.appendChild(el('details',{open:'open'},[el('summary',{text:'Answer'}),h.clipped('pre','c-answer',a[0],a[1],1500)]));
    if(rec.schema!==undefined)c.appendChild(el('details',null,[el('summary',{text:'Schema'}),h.clipped('pre','c-schema',rec.schema,rec.slen,1500)]));
    if(!a&&rec.schema===undefined)c.appendChild(el('p',{class:'muted',text:'No response file for this model: the schema and the answer are not in the report (scores only).'}));
    detail.appendChild(c);c.scrollIntoView({block:'start'});}
  if(C.violationsOmitted)sec.appendChild(el('p',{class:'muted',text:C.violationsOmitted+' violations not embedded (the report keeps at most '+C.maxViolations+'); the rows in eval_records.jsonl have them.'}));
  refresh();
}
return {render:render,violations:violations};
})();
`;
