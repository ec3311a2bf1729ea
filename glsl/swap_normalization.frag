// LU with partial pivoting whose pivot stays on the GPU (beyond the papers, issue 13): step k's
// row swap and its normalization (Kernel 4 of paper 001) in one pass of three lines placed by
// swap_lines.vert -- rows k and p (p the pivot's row, read from the record of pivots at texel
// (at, 0): (value, x, y, 0)) copied swapped from A into the target, and column k below the
// diagonal. A fragment of that column reads its row through the swap (row p reads A's row k)
// and divides by the new pivot A(p, k); the others copy the texel their line's T0 names. Row p's
// texel in column k lies on two of the lines; both write the normalized value. The values are
// those of the swap, then normalization.frag, bit for bit.
uniform sampler2D A;
uniform sampler2D pivot;
uniform int at;
uniform int k;
out float result;

void main() {
    vec2 index = WPOS;
    float kk = float(k);
    if (floor(index.x) == kk && floor(index.y) > kk) {
        float p = texelFetch(pivot, ivec2(at, 0), 0).z;     // the pivot's row
        if (floor(index.y) == p) {
            index.y = kk + 0.5;                              // row p holds the old row k
        }
        result = texRECT(A, index) / texRECT(A, vec2(kk + 0.5, p + 0.5));
    } else {
        result = texRECT(A, T0.xy);
    }
}
