// Beyond the papers (issue 13): write the factored panel back into the 2 x 2-block texture.
// The panel L holds rows c0 .. of the b columns c0 .. c0+b-1 (element (r, c) at texel
// (c - c0, r - c0)); fragment (X, Y) of the block texture gathers its 2 x 2 block from it.
uniform sampler2D L;
uniform int c0;
out vec4 result;

void main() {
    ivec2 e = ivec2(floor(WPOS)) * 2 - c0;   // the block's first element in panel coordinates
    result = vec4(texelFetch(L, e, 0).r, texelFetch(L, e + ivec2(1, 0), 0).r,
                  texelFetch(L, e + ivec2(0, 1), 0).r, texelFetch(L, e + ivec2(1, 1), 0).r);
}
