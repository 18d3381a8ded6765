/**
 * The HTML report's style sheet and page script, as text inlined into the one file. The script
 * uses no library and makes no request: it reads the data element the report writes
 * (report-data.ts), renders one page of the case table at a time, filters and searches, lists the
 * failures grouped by cause, and inflates a case's details (its JSON, transcript and phase
 * timeline) only when the case is opened. Every recorded string reaches the page through
 * `textContent`, never as markup.
 */

/** The report's style sheet. */
export const REPORT_STYLE = `
:root{--fg:#1d2433;--muted:#5b6478;--line:#d9dee8;--bg:#f6f8fb;--pass:#1a7f37;--fail:#cf222e;--skip:#9a6700;--accent:#2f6feb}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#fff;border-bottom:1px solid var(--line);padding:16px 24px}h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}h3{font-size:14px;margin:10px 0 6px}
main{padding:16px 24px;max-width:1400px}.muted{color:var(--muted)}.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:#fff}
.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}.b-skip{background:var(--skip)}.b-running,.b-cancelled,.b-incomplete,.b-abandoned{background:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin:12px 0 18px}.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.card .k{font-size:12px;color:var(--muted)}.card .v{font-size:20px;font-weight:600}
.panels{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:14px;margin-bottom:18px}.panel{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px;overflow:auto}
.chart .grid{stroke:var(--line)}.chart .axis,.chart .val{font-size:11px;fill:var(--muted)}.chart .line{fill:none;stroke:var(--accent);stroke-width:2}.chart .pt{fill:var(--accent)}.chart .pt.other{fill:#fff;stroke:var(--muted);stroke-width:1.5}.chart .pt.current{fill:var(--fail);stroke:#fff;stroke-width:1.5}.chart .bar{fill:var(--accent)}
section#failures{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px;margin-bottom:18px}
details.group{border-top:1px solid var(--line);padding:4px 0}details.group summary{cursor:pointer}details.group .count{display:inline-block;min-width:44px;text-align:right;margin-right:8px;font-weight:600;color:var(--fail)}
details.group ul{margin:4px 0 4px 52px;padding:0 0 0 16px}.rerun{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:0 0 10px}.rerun code{background:#f3f5f9;border:1px solid var(--line);border-radius:6px;padding:4px 8px}
button{font:inherit}button.act{border:1px solid var(--line);background:#fff;border-radius:6px;padding:3px 10px;cursor:pointer}button.act:disabled{opacity:.5;cursor:default}
.controls{display:flex;gap:10px;align-items:center;margin:8px 0 10px;flex-wrap:wrap}input#filter{padding:6px 10px;border:1px solid var(--line);border-radius:6px;min-width:280px}.controls select{padding:6px;border:1px solid var(--line);border-radius:6px;max-width:260px}
table.cases{width:100%;border-collapse:collapse;background:#fff;border:1px solid var(--line)}table.cases th,table.cases td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
table.cases th{background:#eef1f6;font-weight:600;position:sticky;top:0}td.num{text-align:right;white-space:nowrap}td.reason{max-width:460px;word-break:break-word}
button.toggle{border:0;background:none;cursor:pointer;color:var(--accent);font:inherit;padding:0;text-align:left}tr.details td{background:#fbfcfe}
dl{display:grid;grid-template-columns:170px 1fr;gap:4px 12px;margin:4px 0}dt{color:var(--muted)}dd{margin:0;word-break:break-word}pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f9;border:1px solid var(--line);border-radius:6px;padding:8px;margin:0;max-height:360px;overflow:auto}
.timeline{display:flex;height:18px;border-radius:4px;overflow:hidden;border:1px solid var(--line);max-width:640px;background:#fff}.timeline span{display:block;height:100%;min-width:2px}
.ph-setup{background:#8b5cf6}.ph-run{background:#2f6feb}.ph-checks{background:#d97706}.ph-teardown{background:#64748b}.legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.transcript .msg{border-left:3px solid var(--line);padding:4px 8px;margin:4px 0;background:#fff}.transcript .role{font-weight:600;font-size:12px;color:var(--muted);text-transform:uppercase}
.trajectory ol{margin:4px 0;padding-left:28px}.trajectory li.failed{color:var(--fail);font-weight:600}.trajectory li.matched{color:var(--pass)}.trajectory .failure{color:var(--fail)}
.transcript .tool{border-left-color:#d97706}.transcript .tool.err{border-left-color:var(--fail)}.transcript .member{margin-left:18px;border-left:2px dashed var(--line);padding-left:8px}.transcript .judge{border-left-color:#8b5cf6}
.s-pass{color:var(--pass);font-weight:600}.s-fail{color:var(--fail);font-weight:600}.s-skip{color:var(--skip);font-weight:600}[hidden]{display:none !important}
`;

/** The page script (runs once when the page loads). */
export const REPORT_SCRIPT = `
(function(){
  'use strict';
  var D=JSON.parse(document.getElementById('report-data').textContent);
  var rows=D.rows,$=function(id){return document.getElementById(id);};
  var q=$('filter'),st=$('status'),kd=$('kind'),tg=$('tag'),gp=$('group'),ps=$('page-size'),shown=$('shown'),info=$('page-info'),table=$('case-table');
  var hay=null,matched=[],page=0,cache={};
  function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
  function opt(sel,value,label){var o=el('option',null,label);o.value=value;sel.appendChild(o);}
  D.kinds.forEach(function(k){opt(kd,k,k);});
  D.tags.forEach(function(t){opt(tg,t,t);});
  D.groups.forEach(function(g,i){opt(gp,String(i),g.count+' \\u00d7 '+g.label.slice(0,80));});
  if(D.otherFailures>0)opt(gp,'-2',D.otherFailures+' \\u00d7 other causes');
  function matches(i,text,s,k,t,g){var r=rows[i];
    if(s!=='all'&&r[3]!==s)return false;if(k!=='all'&&r[5]!==k)return false;if(t!=='all'&&r[6].indexOf(t)<0)return false;if(g!=='all'&&String(r[10])!==g)return false;
    return !text||hay[i].indexOf(text)>=0;}
  function apply(){
    if(!hay){hay=new Array(rows.length);for(var j=0;j<rows.length;j++){var r=rows[j];hay[j]=(r[2]+' '+r[6].join(' ')+' '+r[4]+' '+r[5]+' '+r[7]).toLowerCase();}}
    var text=q.value.trim().toLowerCase(),s=st.value,k=kd.value,t=tg.value,g=gp.value;matched=[];
    for(var i=0;i<rows.length;i++)if(matches(i,text,s,k,t,g))matched.push(i);
    page=0;render();
  }
  function render(){
    var size=Number(ps.value),pages=Math.max(1,Math.ceil(matched.length/size));if(page>pages-1)page=pages-1;
    var old=table.querySelectorAll('tbody.case');for(var o=0;o<old.length;o++)old[o].remove();
    var frag=document.createDocumentFragment(),from=page*size,to=Math.min(matched.length,from+size);
    for(var i=from;i<to;i++)frag.appendChild(caseBody(rows[matched[i]]));
    table.appendChild(frag);
    shown.textContent='Showing '+matched.length+' of '+rows.length+' cases';
    info.textContent=matched.length?('Page '+(page+1)+' of '+pages+' \\u00b7 cases '+(from+1)+'-'+to):'Page 1 of 1';
    $('prev').disabled=page===0;$('next').disabled=page>=pages-1;
  }
  function caseBody(r){
    var tb=el('tbody','case');tb.setAttribute('data-status',r[3]);tb.setAttribute('data-name',r[2]);tb.setAttribute('data-pos',String(r[0]));
    var tr=el('tr','row');tr.appendChild(el('td','num',r[1]));
    var c=el('td'),b=el('button','toggle',r[2]);b.type='button';b.setAttribute('aria-expanded','false');c.appendChild(b);tr.appendChild(c);
    tr.appendChild(el('td','s-'+r[3],r[3].toUpperCase()));tr.appendChild(el('td','reason',r[4]));var kc=el('td','kind',r[5]);tr.appendChild(kc);
    tr.appendChild(el('td',null,r[7]));tr.appendChild(el('td','num',r[8]+'s'));tr.appendChild(el('td','num',r[9]));tb.appendChild(tr);
    var d=el('tr','details');d.hidden=true;d.appendChild(el('td'));var body=el('td');body.colSpan=7;d.appendChild(body);tb.appendChild(d);return tb;
  }
  function chunk(n){
    if(!cache[n]){var b=atob($('chunk-'+n).textContent.trim()),u=new Uint8Array(b.length);for(var i=0;i<b.length;i++)u[i]=b.charCodeAt(i);
      cache[n]=new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(JSON.parse);}
    return cache[n];
  }
  function detailOf(pos){return chunk(Math.floor(pos/D.chunkCases)).then(function(list){return list[pos%D.chunkCases];});}
  function row(dl,k,v){dl.appendChild(el('dt',null,k));var dd=el('dd');if(typeof v==='string')dd.textContent=v;else dd.appendChild(v);dl.appendChild(dd);}
  function pre(cls,text){return el('pre',cls,text);}
  function verdict(v){return v===null||v===undefined?'\\u2014':v?'PASS':'FAIL';}
  function list(xs){return xs&&xs.length?xs.join(', '):'none';}
  function secs(v){return v<1?Math.round(v*1000)+'ms':(Math.round(v*100)/100)+'s';}
  function timeline(ph){
    var box=el('div'),bar=el('div','timeline'),legend=el('div','legend muted'),total=0,names=['setup','run','checks','teardown'];
    names.forEach(function(n){total+=ph[n]||0;});
    names.forEach(function(n){var v=ph[n]||0;if(v>0||total===0){var s=el('span','ph-'+n);s.style.width=(total>0?100*v/total:25)+'%';s.title=n+' '+secs(v);bar.appendChild(s);}
      var l=el('span');var i=el('i','ph-'+n);l.appendChild(i);l.appendChild(document.createTextNode(n+' '+secs(v)));legend.appendChild(l);});
    box.className='phases';box.appendChild(bar);box.appendChild(legend);return box;
  }
  // The stored transcript (shared/wire/transcript.ts): the messages in order, each tool call with
  // its arguments and result or error, the members at every depth, then the judge's verdict.
  function transcriptView(t,r){
    var box=el('div','transcript');
    if(t.unreadable||t.omitted){box.appendChild(el('p','muted',t.unreadable?'The stored transcript cannot be read: '+t.unreadable:'Transcript '+t.omitted));return box;}
    var head=[];if(t.status)head.push('status '+t.status);if(t.usage&&t.usage.totalTokens!==null)head.push(t.usage.totalTokens+' tokens');
    if(t.cut)head.push('cut to '+Math.round(t.cut.maxBytes/1024)+' KB from '+Math.round(t.cut.originalBytes/1024)+' KB ('+t.cut.steps.join(', ')+')');
    if(head.length)box.appendChild(el('div','muted',head.join(' \u00b7 ')));
    if(t.run)box.appendChild(runView(t.run,0,null));else box.appendChild(el('p','muted','No output: '+(t.error||'the agent gave none')));
    if(r.judgePassed!==null||r.judgeReason){var j=el('div','msg judge');j.appendChild(el('div','role','judge'));j.appendChild(el('div',null,verdict(r.judgePassed)+(r.judgeScore!==null?' \u00b7 score '+r.judgeScore:'')+(r.judgeReason?' \u00b7 '+r.judgeReason:'')));box.appendChild(j);}
    return box;
  }
  function content(v){return v===undefined||v===null?'':typeof v==='string'?v:JSON.stringify(v,null,2);}
  function runView(run,depth,label){
    var box=el('div',depth?'member':'run');
    var title=[label||(depth?'member':'agent')];if(run.agentId)title.push(run.agentId);if(run.model)title.push(run.model);if(run.status&&run.status!=='completed')title.push(run.status);
    box.appendChild(el('div','role',title.join(' \u00b7 ')));
    (run.messages||[]).forEach(function(m){
      var d=el('div','msg m-'+m.role);d.appendChild(el('div','role',m.role+(m.fromHistory?' (history)':'')));
      var c=content(m.content);if(c)d.appendChild(pre('content',c));
      (m.toolCalls||[]).forEach(function(tc){d.appendChild(el('div','call','\u2192 '+tc.function.name+'('+(tc.function.arguments||'')+')'));});
      box.appendChild(d);
    });
    (run.tools||[]).forEach(function(tool){
      var failed=Boolean(tool.toolCallError);var d=el('div','msg tool'+(failed?' err':''));
      d.appendChild(el('div','role','tool '+(tool.toolName||'?')+(tool.isPaused?' (paused)':'')));
      d.appendChild(el('div','muted','arguments'));d.appendChild(pre('tool-args',JSON.stringify(tool.toolArgs||{},null,2)));
      if(failed){d.appendChild(el('div','muted','error'));d.appendChild(pre('tool-error',content(tool.toolCallError)));}
      else{d.appendChild(el('div','muted','result'));d.appendChild(pre('tool-result',content(tool.result)));}
      box.appendChild(d);
    });
    (run.memberResponses||[]).forEach(function(mr,i){box.appendChild(runView(mr,depth+1,'member '+(i+1)+' (depth '+(depth+1)+')'));});
    var out=content(run.content);if(out){var f=el('div','msg final');f.appendChild(el('div','role','final output'));f.appendChild(pre(null,out));box.appendChild(f);}
    return box;
  }
  // The reliability check's steps, each with its verdict; a failed step is marked, and each failure says why.
  function trajectoryView(t,reason){
    var box=el('div','trajectory');if(reason)box.appendChild(el('div','reason',reason));
    var ol=el('ol','steps');
    t.steps.forEach(function(s){var li=el('li',s.verdict,(s.member?s.member+'/':'')+(s.tool||'?')+' \u00b7 '+s.outcome+' \u00b7 '+s.verdict+(s.expectation!==null?' (expected call '+(s.expectation+1)+')':''));li.setAttribute('data-step',String(s.step));ol.appendChild(li);});
    if(t.steps.length)box.appendChild(ol);else box.appendChild(el('div',null,'no tool calls ('+t.order+' order)'));
    t.failures.forEach(function(f){box.appendChild(el('div','failure',(f.step!==null?'step '+f.step+': ':'')+f.message));});
    if(t.cut)box.appendChild(el('div',null,'the first '+t.steps.length+' of '+t.cut.steps+' steps and '+t.failures.length+' of '+t.cut.failures+' failures'));
    return box;
  }
  function detail(d){
    var r=d.record,dl=el('dl');
    row(dl,'Component',r.agentId?'agent '+r.agentId:r.teamId?'team '+r.teamId:'\\u2014');
    row(dl,'Tags',list(r.tags));row(dl,'Session',r.sessionId||'\\u2014');
    row(dl,'Worker / attempts',(r.worker||'\\u2014')+' / '+r.attempts);
    row(dl,'Duration',r.durationSeconds+'s'+(r.timedOut?' (timed out)':''));
    if(d.json&&d.json.phase_seconds)row(dl,'Phases',timeline(d.json.phase_seconds));
    if(d.checks.length){var ul=el('ul','checks');d.checks.forEach(function(c){var li=el('li');li.appendChild(el('b',null,c.check+': '));li.appendChild(document.createTextNode(c.reason));ul.appendChild(li);});row(dl,'Failed checks',ul);}
    row(dl,'Judge',verdict(r.judgePassed)+(r.judgeScore!==null?' \\u00b7 score '+r.judgeScore:'')+(r.judgeReason?' \\u00b7 '+r.judgeReason:''));
    if(r.reliabilityPassed!==null||r.reliability){var x=r.reliability;row(dl,'Reliability',verdict(r.reliabilityPassed)+(x?' \\u00b7 passed: '+list(x.passedToolCalls)+' \\u00b7 missing: '+list(x.missingToolCalls)+' \\u00b7 additional: '+list(x.additionalToolCalls)+' \\u00b7 failed: '+list(x.failedToolCalls):''));}
    if(d.json&&d.json.trajectory)row(dl,'Trajectory',trajectoryView(d.json.trajectory,d.json.reliability_reason));
    if(r.scoreValue!==null)row(dl,'Scorer',verdict(r.scorePassed)+' \\u00b7 value '+r.scoreValue+(r.scoreReason?' \\u00b7 '+r.scoreReason:''));
    if(r.scoreDetail)row(dl,'Scorer detail',pre(null,JSON.stringify(r.scoreDetail,null,2)));
    row(dl,'Tools called',list(r.toolsCalled));
    if(r.inputTokens!==null||r.outputTokens!==null||r.totalTokens!==null||r.costUsd!==null)row(dl,'Tokens / cost','in '+(r.inputTokens===null?'?':r.inputTokens)+' \\u00b7 out '+(r.outputTokens===null?'?':r.outputTokens)+' \\u00b7 total '+(r.totalTokens===null?'?':r.totalTokens)+(r.costUsd!==null?' \\u00b7 $'+r.costUsd:''));
    if(r.error)row(dl,'Error',pre('error',r.error));
    row(dl,'Output',pre('output',r.output?(r.output+(r.outputCut>0?'\\n... ('+r.outputCut+' more characters in the database)':'')):'(empty)'));
    if(d.transcript)row(dl,'Transcript',transcriptView(d.transcript,r));
    var j=el('details','case-json');j.appendChild(el('summary',null,'Case JSON'));j.appendChild(pre('json',JSON.stringify(d.json,null,2)));row(dl,'JSON',j);
    return dl;
  }
  function toggle(b){
    var tb=b.closest('tbody'),d=tb.querySelector('tr.details');d.hidden=!d.hidden;b.setAttribute('aria-expanded',String(!d.hidden));
    if(d.hidden||tb.getAttribute('data-loaded'))return;tb.setAttribute('data-loaded','1');
    var cell=d.lastChild;cell.textContent='Loading\\u2026';
    detailOf(Number(tb.getAttribute('data-pos'))).then(function(x){cell.textContent='';cell.appendChild(detail(x));tb.setAttribute('data-ready','1');},function(e){cell.textContent='cannot open the details: '+e;});
  }
  function groups(){
    var box=$('groups');if(!box)return;
    D.groups.forEach(function(g,i){
      var det=el('details','group');det.setAttribute('data-group',String(i));var sum=el('summary');sum.appendChild(el('span','count',g.count));sum.appendChild(document.createTextNode(g.label));det.appendChild(sum);
      det.addEventListener('toggle',function(){if(!det.open||det.getAttribute('data-filled'))return;det.setAttribute('data-filled','1');
        var ul=el('ul'),n=0;for(var k=0;k<rows.length&&n<20;k++)if(rows[k][10]===i){ul.appendChild(el('li',null,rows[k][2]));n++;}
        if(g.count>n)ul.appendChild(el('li','muted','and '+(g.count-n)+' more'));det.appendChild(ul);
        var s=el('button','act show-group','Show these '+g.count+' cases in the table');s.type='button';s.addEventListener('click',function(){gp.value=String(i);st.value='all';apply();$('cases').scrollIntoView();});det.appendChild(s);});
      box.appendChild(det);
    });
    if(D.otherFailures>0)box.appendChild(el('p','muted',D.otherFailures+' more failures with '+'other causes (filter: group)'));
  }
  var copy=$('copy-rerun');
  if(copy)copy.addEventListener('click',function(){
    var cmd=$('rerun-command').textContent;
    function fallback(){var range=document.createRange();range.selectNodeContents($('rerun-command'));var s=window.getSelection();s.removeAllRanges();s.addRange(range);try{document.execCommand('copy');copy.textContent='Copied';}catch(e){copy.textContent='Selected: press Ctrl+C';}}
    if(navigator.clipboard&&navigator.clipboard.writeText)navigator.clipboard.writeText(cmd).then(function(){copy.textContent='Copied';},fallback);else fallback();
  });
  q.addEventListener('input',apply);[st,kd,tg,gp].forEach(function(s){s.addEventListener('change',apply);});ps.addEventListener('change',function(){page=0;render();});
  $('prev').addEventListener('click',function(){if(page>0){page--;render();}});$('next').addEventListener('click',function(){page++;render();});
  document.addEventListener('click',function(e){var b=e.target.closest&&e.target.closest('button.toggle');if(b)toggle(b);});
  groups();apply();document.body.setAttribute('data-ready','1');
})();
`;
