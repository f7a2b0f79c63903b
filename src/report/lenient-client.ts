/**
 * The report page's lenient parts (inlined into the page's script, which calls them; they only
 * define functions, and read `D.lenient` — null when nothing was scored with `sob score --match`):
 * the lenient columns of the unified leaderboard, the "Exact vs lenient" section (per model: Value
 * Accuracy, lenient Value Accuracy, the gap and its share of the loss, ranks and shifts, a stacked
 * bar per model, Kendall's tau and the ranking's sensitivity), the records list's Len.VA column,
 * and in the record view the lenient scores and which matcher accepted each leaf.
 */
/** Its styles: with more columns, the leaderboard's and records' headers wrap and cells pad less. */
export const LENIENT_CSS = `
body.lenient #leaderboard th,body.lenient #records th,#lenient-table th{white-space:normal;vertical-align:bottom}
body.lenient #leaderboard th,body.lenient #leaderboard td,body.lenient #records td{padding:3px 5px}
`;

export const LENIENT_CLIENT = `
function lenientNav(){return D.lenient?[['len','Exact vs lenient']]:[];}
function signed(n){return n==null?'-':(n>0?'+'+n:String(n));}
function gapText(x){return x==null?'-':(x>=0?'+':'')+x.toFixed(3);}
/** The unified leaderboard's lenient columns, after Val.Acc. */
function lenientCols(cols){
  if(!D.lenient)return cols;var out=cols.slice();document.body.classList.add('lenient');
  out.splice(4,0,
    {label:'Len.VA',title:'lenient Value Accuracy (policy '+D.lenient.policy+'); click to sort',get:function(r){return r.lenient?r.lenient.value_accuracy:null;},text:function(r){return r.lenient?f3(r.lenient.value_accuracy):'-';}},
    {label:'Gap',title:'lenient minus exact Value Accuracy: the part of the loss that is formatting',get:function(r){return r.lenient?r.lenient.gap:null;},text:function(r){return r.lenient?gapText(r.lenient.gap):'-';}},
    {label:'Shift',title:'exact rank minus lenient rank, by Overall (+ = moves up when formatting is forgiven)',get:function(r){return r.lenient?r.lenient.rank_shift:null;},text:function(r){return r.lenient?signed(r.lenient.rank_shift):'-';}});
  return out;
}
function lenientSection(){
  if(!D.lenient)return;var L=D.lenient;
  var s=section('len','Exact vs lenient','Value Accuracy is exact and positional (SOB). Lenient Value Accuracy accepts the same value written another way (case, punctuation, number and date formats, synonyms, array order; the judge where the policy asks it), under the same gates. The gap between the two is the part of a model\\'s loss that is formatting; what lenient matching still rejects is wrong values.');
  var tauText=function(t){return t==null?'undefined':t.toFixed(3);};
  s.appendChild(el('p',{id:'lenient-policy',text:'Policy: '+L.policy+(L.judge?', judge '+L.judge:', no judge')+'. Kendall\\'s tau between the exact and lenient rankings: '+tauText(L.tau)+' by Overall, '+tauText(L.tauVa)+' by Value Accuracy.'}));
  var rows=D.leaderboard.filter(function(r){return r.lenient;});
  var tb=el('table',{id:'lenient-table'});
  var lc=[{label:'Model',left:true,get:function(r){return r.display_name;}},
    {label:'Val.Acc.',get:function(r){return r.value_accuracy;}},
    {label:'Len.VA',get:function(r){return r.lenient.value_accuracy;}},
    {label:'Gap',title:'Len.VA - Val.Acc.: formatting',get:function(r){return r.lenient.gap;},text:function(r){return gapText(r.lenient.gap);}},
    {label:'Formatting share of loss',title:'gap / (1 - Val.Acc.)',get:function(r){return r.lenient.gap_share;},text:function(r){return r.lenient.gap_share==null?'-':(100*r.lenient.gap_share).toFixed(0)+'%';}},
    {label:'Wrong values',title:'1 - Len.VA',get:function(r){return 1-r.lenient.value_accuracy;}},
    {label:'Len.Faithful.',get:function(r){return r.lenient.faithfulness;}},
    {label:'Field F1',get:function(r){return r.lenient.field_f1;}},
    {label:'Rank',title:'by Overall: exact -> lenient',get:function(r){return r.lenient.rank_exact;},text:function(r){return r.lenient.rank_exact+' -> '+r.lenient.rank_lenient;}},
    {label:'Shift',get:function(r){return r.lenient.rank_shift;},text:function(r){return signed(r.lenient.rank_shift);}}];
  sortable(tb,rows,lc,function(r){var tr=el('tr',{'data-model':r.model});lc.forEach(function(c){var v=c.text?c.text(r):c.get(r);tr.appendChild(el('td',{class:c.left?'l':'',text:typeof v==='number'?f3(v):v==null?'-':String(v)}));});return tr;});
  s.appendChild(el('div',{class:'card'},[tb]));
  // A stacked bar per model: exact Value Accuracy, the gap (formatting), the rest (wrong values).
  var sorted=rows.slice().sort(function(a,b){return b.lenient.value_accuracy-a.lenient.value_accuracy;});
  var w=760,bh=14,top=34,h=sorted.length*bh+top+24;
  var svg='<svg id="lenient-bars" width="'+w+'" height="'+h+'" role="img" aria-label="Value Accuracy, exact and lenient, by model">';
  svg+='<text class="chart-title" x="0" y="14">Value Accuracy by model: exact (blue) + formatting gap (orange) = lenient; grey: wrong values</text>';
  sorted.forEach(function(r,i){var y=top+i*bh,e=r.value_accuracy||0,g=Math.max(0,r.lenient.gap),x0=200,W=520;
    svg+='<text x="0" y="'+(y+10)+'">'+esc(r.display_name.slice(0,28))+'</text>';
    svg+='<rect x="'+x0+'" y="'+y+'" width="'+(e*W).toFixed(1)+'" height="'+(bh-3)+'" fill="#3b82f6"><title>'+esc(r.display_name)+': Value Accuracy '+f3(e)+'</title></rect>';
    svg+='<rect x="'+(x0+e*W).toFixed(1)+'" y="'+y+'" width="'+(g*W).toFixed(1)+'" height="'+(bh-3)+'" fill="#f59e0b"><title>'+esc(r.display_name)+': gap '+gapText(r.lenient.gap)+' (lenient '+f3(r.lenient.value_accuracy)+')</title></rect>';
    svg+='<rect x="'+(x0+(e+g)*W).toFixed(1)+'" y="'+y+'" width="'+(Math.max(0,1-e-g)*W).toFixed(1)+'" height="'+(bh-3)+'" fill="#e5e7eb"></rect>';});
  svg+='</svg>';s.appendChild(el('div',{class:'card',html:svg}));
  if(L.sensitivity){var ul=el('ul',{id:'lenient-sensitivity'});
    L.sensitivity.tau.forEach(function(t){ul.appendChild(el('li',{text:'Kendall\\'s tau-b, '+t.a+' vs '+t.b+' (by Overall): '+tauText(t.tau)+' over '+t.models+' models'}));});
    s.appendChild(el('div',{class:'card'},[el('b',{text:'How stable is the ranking?'}),ul]));}
}
/** The lenient numbers of a record list entry [mi, source, row], or undefined. */
function lenRow(x){return D.lenient?own(D.lenient.rows,x[0]+'|'+x[2][0]):undefined;}
function lenientRecordCols(){
  if(!D.lenient)return [];
  return [{label:'Len.VA',get:function(x){var v=lenRow(x);return v?v[0]:null;}}];
}
function lenientRecordLine(c,x){
  var v=lenRow(x);if(!v)return;
  c.appendChild(el('p',{id:'lenient-scores'},['Lenient ('+D.lenient.policy+'): Value Accuracy '+f3(v[0])+' · Faithfulness '+f3(v[1])+' · field precision '+f3(v[2])+', recall '+f3(v[3])+', F1 '+f3(v[4])]));
}
/** Adds to the leaf diff which matcher accepted each leaf (or why none did). */
function lenientDiffColumn(tb,x,rec){
  var v=lenRow(x);if(!v||v.length<6)return;
  var byPath=new Map();v[5].forEach(function(e){var p=typeof e[0]==='number'&&rec.leaves?rec.leaves[e[0]][0]:String(e[0]);byPath.set(p,e);});
  var head=tb.querySelector('thead tr');if(head)head.appendChild(el('th',{class:'l',title:'lenient matching: the matcher that accepted the leaf, or why none did',text:'lenient'}));
  Array.prototype.forEach.call(tb.querySelectorAll('tbody tr'),function(tr){
    var path=tr.getAttribute('data-path'),status=tr.getAttribute('data-status'),e=byPath.get(path),text;
    if(status==='3')text='';
    else if(e)text=e[1].replace('_',' ')+(e[2]?' (answer at '+e[2]+')':'');
    else text=status==='0'?'exact':'-';
    tr.appendChild(el('td',{class:'l lenient-leaf',text:text}));});
}
`;
