// Beyond the papers: column_sums.frag in float-float arithmetic (float_float.glsl): y_i = sum over
// c = 0 .. rows-1 of P(c, i), in order (the partial sums of triangular_product_chunks_ff).
uniform sampler2D P;
uniform int rows;
out vec4 result;

void main() {
    int i = int(WPOS.x);
    vec2 sum = vec2(0.0);
    for (int c = 0; c < rows; c++)
        sum = ff_add(sum, texelFetch(P, ivec2(i, c), 0).rg);
    result = vec4(sum, 0.0, 0.0);
}
