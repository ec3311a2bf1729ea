// Beyond the papers (blocked LU, pivot on the GPU): the row gather of one panel's swaps,
// computed from the record of pivots instead of being swapped pass by pass: fragment r writes
// the row of A that lands in row r after the swaps c0 + k <-> c0 + p_k, k = 0 .. b-1 (p_k the
// panel row in texel c0 + k of the record, (value, x, y, 0)), replayed last to first.
uniform sampler2D record;
uniform int c0;
uniform int b;
out float result;

void main() {
    int r = int(floor(WPOS.x));
    for (int k = b - 1; k >= 0; k--) {
        int p = c0 + int(texelFetch(record, ivec2(c0 + k, 0), 0).z);
        if (r == c0 + k)
            r = p;
        else if (r == p)
            r = c0 + k;
    }
    result = float(r);
}
