// The totals of pcg_chunk_sums' rows (the fused PCG iteration, beyond 002): the fragments that
// use a total add it themselves (pcg_direction, pcg_step_scalars), from texels every fragment
// fetches alike, so no pass of totals waits between the sums and them.
//     sums_row_total(S, c, count):  texels 0 .. count - 1 of row c, GROUP fetches in flight
//                                   before they are added, in order
//     sums_gamma_rr(S, k4, chunks): (gamma = r^T z = sum w (r - phi) + r_K^T H r_K, ||r||^2)
vec4 sums_row_total(sampler2D S, int c, int count) {
    const int GROUP = 4;
    vec4 sum = vec4(0.0);
    int j = 0;
    for (; j + GROUP <= count; j += GROUP) {
        vec4 part[GROUP];
        for (int g = 0; g < GROUP; ++g)
            part[g] = texelFetch(S, ivec2(j + g, c), 0);
        for (int g = 0; g < GROUP; ++g)
            sum += part[g];
    }
    for (; j < count; ++j)
        sum += texelFetch(S, ivec2(j, c), 0);
    return sum;
}

vec2 sums_gamma_rr(sampler2D S, int k4, int chunks) {
    vec4 terms = sums_row_total(S, k4 + 1, k4);
    vec4 sums = sums_row_total(S, k4, chunks);
    return vec2(sums.r + (terms.r + terms.g + terms.b + terms.a), sums.g);
}
