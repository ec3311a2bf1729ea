// What PCG reads back at a check (beyond 002, whose CPU held its scalars): the four 1 x 1
// streams p^T q, r^T z, the breakdown watch and r^T r side by side in one RGBA texel, so one
// transfer brings them (instead of one each).
uniform sampler2D pq;
uniform sampler2D rz;
uniform sampler2D watch;
uniform sampler2D rr;
out vec4 result;

void main() {
    result = vec4(texelFetch(pq, ivec2(0), 0).r, texelFetch(rz, ivec2(0), 0).r,
                  texelFetch(watch, ivec2(0), 0).r, texelFetch(rr, ivec2(0), 0).r);
}
