// Beyond the papers (issue 13): write a factored panel back into the 2 x 2-block texture. The
// R32F panel L holds element (r, c) at texel (c - origin.x, r - origin.y) (a column panel:
// origin (c0, c0); a row panel of blocked LU: (c0 + b, c0)); fragment (X, Y) of the block
// texture gathers its 2 x 2 block from it.
uniform sampler2D L;
uniform ivec2 origin;
out vec4 result;

void main() {
    ivec2 e = ivec2(floor(WPOS)) * 2 - origin;   // the block's first element in panel coordinates
    result = vec4(texelFetch(L, e, 0).r, texelFetch(L, e + ivec2(1, 0), 0).r,
                  texelFetch(L, e + ivec2(0, 1), 0).r, texelFetch(L, e + ivec2(1, 1), 0).r);
}
