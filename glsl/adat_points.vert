#version 330
// A D^2 A^T from the non-zeros of A (beyond the papers): paper 001's Algorithm 3 in outer-product
// form, C = sum_k d(k) a_k a_k^T, restricted to the non-zeros of each column and drawn as ONE pass
// of points with additive blending. Vertex p is pair p of the pair table: the RGBA32F texel
// (p mod W, p div W) holds (j, i, a(i,k) a(j,k), k) for one pair i >= j of non-zeros of column k
// (the table sorted by k, then i, then j). The point lands on texel (x = j, y = i) of C, the lower
// triangle, carrying a(i,k) a(j,k) d(k); the blender adds the points of one texel in primitive
// order, i.e. in the order of k, as 001 sums over the columns. Indexes are float32: exact below 2^24.
uniform sampler2D pairs;    // the pair table, W texels a row
uniform sampler2D d;        // the diagonal of D^2, a vector folded d_width texels a row
uniform int W;
uniform int d_width;
uniform vec2 viewport;
flat out float contribution;
noperspective out vec3 T0;
noperspective out vec3 T1;

void main() {
    int p = gl_VertexID;
    vec4 pair = texelFetch(pairs, ivec2(p % W, p / W), 0);   // (j, i, a_ik a_jk, k)
    int k = int(pair.w);
    contribution = pair.z * texelFetch(d, ivec2(k % d_width, k / d_width), 0).r;
    vec2 texel = pair.xy + 0.5;
    gl_Position = vec4(2.0 * texel / viewport - 1.0, 0.0, 1.0);
    gl_PointSize = 1.0;
    T0 = vec3(0.0);
    T1 = vec3(0.0);
}
