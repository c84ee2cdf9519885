/** The public URL of a stored file (`/files/{id}` outside the API prefix), or null. Apart from model.ts so mail code loads no schema library. */
export const fileUrl = (baseUrl: string, fileId: string | null) => (fileId ? `${baseUrl}/files/${fileId}` : null)
