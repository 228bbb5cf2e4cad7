# Counts SASS instructions (16 bytes each, NOPs excluded) per kernel of exl3_dq_count.cu
# compiled with: nvcc -arch=sm_86 -cubin -O3 -std=c++17 -I<exllamav3 v1.0.0 exllamav3_ext> -o k.cubin exl3_dq_count.cu
# (util.cuh with its cuBLAS helpers removed). Prints, per (bits, codebook, mode), the counts for 1, 2, 3 calls per
# loop iteration and the increments: one dq_dispatch call (8 weights) plus 7 HADD2 of the loop sum.
import struct,re,collections
d=open(__import__('sys').argv[1] if len(__import__('sys').argv) > 1 else 'k.cubin','rb').read()
shoff=struct.unpack_from('<Q',d,0x28)[0]; shentsize,shnum,shstrndx=struct.unpack_from('<HHH',d,0x3A)
secs=[]
for i in range(shnum):
    name,typ,flags,addr,off,size=struct.unpack_from('<IIQQQQ',d,shoff+i*shentsize)
    secs.append((name,off,size))
stroff=secs[shstrndx][1]
def nm(n): e=d.index(b'\0',stroff+n); return d[stroff+n:e].decode()
K={}
for n,off,size in secs:
    s=nm(n)
    if s.startswith('.text.'):
        m=re.search(r'kernILi(\d)ELi(\d)ELi(\d)ELi(\d)E',s)
        ops=[struct.unpack_from('<Q',d,off+16*i)[0]&0xfff for i in range(size//16)]
        K[tuple(map(int,m.groups()))]=ops
def real(ops): return [o for o in ops if o!=0x918]
for b,cb,m in [(1,2,1),(2,2,1),(3,2,1),(4,2,1),(5,2,1),(6,2,1),(7,2,1),(8,2,1),(4,1,1),(6,1,1),(4,2,0),(6,2,0)]:
    s=[len(real(K[(b,cb,m,r)])) for r in (1,2,3)]
    print(b,cb,m,s,'per rep',s[1]-s[0],s[2]-s[1])
import sys
if len(sys.argv)>2:
    for key in [(4,2,1,1),(6,2,1,1)]:
        print(key, ' '.join('%03x'%o for o in real(K[key])))
