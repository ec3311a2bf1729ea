// Prepended to every kernel (after #version). It gives the papers' vocabulary:
//   WPOS          the window position of the fragment: (column + 0.5, row + 0.5)
//   T0, T1        the interpolated texture-coordinate sets TEXCOORD0 and TEXCOORD1
//   texRECT(A, c) fetch texel floor(c) of the rectangle texture A (c in texel units)
#define WPOS gl_FragCoord.xy
noperspective in vec3 T0;
noperspective in vec3 T1;

float texRECT(sampler2D A, vec2 c) {
    return texelFetch(A, ivec2(floor(c)), 0).r;
}

vec4 texRECT4(sampler2D A, vec2 c) {
    return texelFetch(A, ivec2(floor(c)), 0);
}

// A vector longer than one texture row is folded into rows `width` texels wide: entry i at
// texel (i mod width, i div width). texVECTOR fetches entry i (given as a float index).
float texVECTOR(sampler2D X, float i, int width) {
    int j = int(i);
    return texelFetch(X, ivec2(j % width, j / width), 0).r;
}
