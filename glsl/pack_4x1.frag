// Beyond the papers (issues 11 and 13: the 4 x 1 packing): four consecutive elements of a row
// of the R32F stream A in one RGBA texel, texel (q, i) = (A(i, 4q), A(i, 4q+1), A(i, 4q+2),
// A(i, 4q+3)); elements at or past column `n` (the last texel of a row whose length is not a
// multiple of 4) are 0, so that packed inner products need no test at the end of a row.
uniform sampler2D A;
uniform int n;          // the columns of A
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (q, i)
    vec4 v = vec4(0.0);
    for (int c = 0; c < 4; c++) {
        int j = 4 * t.x + c;
        if (j < n)
            v[c] = texelFetch(A, ivec2(j, t.y), 0).r;
    }
    result = v;
}
