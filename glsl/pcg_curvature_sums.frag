// The partial sums of p^T G_R p = sum_j theta_j (A^T p)_j^2 + delta ||p||^2 (paper 002 (6),
// G_R = A Theta~ A^T + delta I), beyond 002: from u = A^T p, before the product A Theta~ u
// that PCG's residual update needs, so the sum does not wait for it. Fragment (j, 0) adds
// theta u^2 over chunk j of the n entries, fragment (j, 1) p^2 over chunk j of the m. Each
// loop issues the fetches of GROUP entries before it adds them, in order (as pcg_chunk_sums).
uniform sampler2D U;        // A^T p
uniform sampler2D Theta;
uniform sampler2D P;
uniform int n;
uniform int n_width;
uniform int n_chunk;
uniform int m;
uniform int m_width;
uniform int m_chunk;
out float result;

const int GROUP = 4;        // entries whose fetches are in flight together

float curvature(int i) {    // theta_i u_i^2
    ivec2 t = ivec2(i % n_width, i / n_width);
    float u = texelFetch(U, t, 0).r;
    return texelFetch(Theta, t, 0).r * u * u;
}

float square(int i) {       // p_i^2
    float p = texelFetch(P, ivec2(i % m_width, i / m_width), 0).r;
    return p * p;
}

void main() {
    int j = int(WPOS.x);
    float sum = 0.0;
    if (int(WPOS.y) == 0) {
        int last = min(j * n_chunk + n_chunk, n);
        int i = j * n_chunk;
        for (; i + GROUP <= last; i += GROUP) {
            float part[GROUP];
            for (int g = 0; g < GROUP; ++g)
                part[g] = curvature(i + g);
            for (int g = 0; g < GROUP; ++g)
                sum += part[g];
        }
        for (; i < last; ++i)
            sum += curvature(i);
    } else {
        int last = min(j * m_chunk + m_chunk, m);
        int i = j * m_chunk;
        for (; i + GROUP <= last; i += GROUP) {
            float part[GROUP];
            for (int g = 0; g < GROUP; ++g)
                part[g] = square(i + g);
            for (int g = 0; g < GROUP; ++g)
                sum += part[g];
        }
        for (; i < last; ++i)
            sum += square(i);
    }
    result = sum;
}
