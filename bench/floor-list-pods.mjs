// The floor for any Node CLI listing pods: grpc-js and one ListPodSandbox call, nothing else
// (an empty request encodes to zero bytes; the response is left undecoded).
import {Client, credentials} from '@grpc/grpc-js'

const endpoint = process.argv[2] ?? process.env.CONTAINER_RUNTIME_ENDPOINT
const client = new Client(endpoint, credentials.createInsecure(), {'grpc.max_receive_message_length': 64 << 20})
client.makeUnaryRequest(
  '/runtime.v1.RuntimeService/ListPodSandbox',
  () => Buffer.alloc(0),
  (buffer) => buffer,
  {},
  {deadline: Date.now() + 10_000},
  (error, response) => {
    client.close()
    if (error) {
      console.error(error.message)
      process.exit(1)
    }

    console.log(`${response.length} bytes`)
  },
)
