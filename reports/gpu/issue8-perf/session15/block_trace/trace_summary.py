# Summarises block_trace.patch's CSVs (block, start ns, end ns, SM; one file per launch): blocks per SM, the
# makespan from the first block's start, each SM's last end, and the share of SM time used until the makespan.
#   python3 trace_summary.py 'trace_*_fused_*.csv'
import collections,statistics,sys,glob
for f in sorted(glob.glob(sys.argv[1])):
    rows=[list(map(int,l.split(','))) for l in open(f)]
    t0=min(r[1] for r in rows)
    per_sm=collections.defaultdict(list)
    for b,s,e,sm in rows: per_sm[sm].append(((s-t0)/1000,(e-t0)/1000))
    last_end={sm:max(e for s,e in v) for sm,v in per_sm.items()}
    ends=sorted(last_end.values())
    nblk=collections.Counter(len(v) for v in per_sm.values())
    mk=max(ends)
    # busy fraction: sum over SMs of last_end / (nSM*makespan)
    util=sum(ends)/(len(ends)*mk)
    early=[sm for sm,e in last_end.items() if e < mk*0.88]
    print(f.split('/')[-1], 'blocks',len(rows),'SMs',len(per_sm),'blocks/SM',dict(nblk),'makespan %.1f'%mk,
          'SM last-end min/med %.1f/%.1f'%(ends[0],statistics.median(ends)),'SM-time used %.3f'%util,
          'early SMs(<0.88 mk):',len(early), sorted(early)[:40])
